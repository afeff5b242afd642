//go:build linux

package moat_test

import (
	"fmt"
	"log"

	"github.com/moat-sandbox/moat"
)

// The zero Config is the strictest useful policy: the working directory is
// the only writable place, the network is denied, and default limits apply.
func Example() {
	sb, err := moat.New(moat.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()

	out, err := sb.Command("python3", "-c", `print("hello from the sandbox")`).Output()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(out))
	// Output: hello from the sandbox
}
