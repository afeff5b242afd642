// Command moat runs a command, usually LLM-generated code, in a native OS
// sandbox. Run "moat --help" for usage; the work is done by package cli.
package main

import (
	"os"

	"github.com/moat-sandbox/moat/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
