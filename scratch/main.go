package main

import (
	"fmt"
	"os"

	"github.com/moat-sandbox/moat"
)

func main() {
	sb, err := moat.New(moat.Config{})
	if err != nil {
		fmt.Println("new:", err)
		os.Exit(1)
	}
	defer sb.Close()
	fmt.Print(sb.Report())
	c := sb.Command(os.Args[1], os.Args[2:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = c.Run()
	fmt.Println("err:", err)
}
