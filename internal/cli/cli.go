// Package cli implements the moat command: run, shell, doctor and version.
//
// Exit statuses follow the conventions of env(1), nohup(1) and container
// runtimes: a command's own status passes through (128+N when signal N
// killed it), 126 means the command could not be executed, 127 that it was
// not found, 125 that moat itself failed, and 2 a mistake on the command
// line. moat's own messages go to standard error as one line starting with
// "moat: ".
package cli

import (
	"fmt"
	"os"
)

// stdio is the standard streams a moat invocation works with. They are
// *os.File so that run can hand them to the sandboxed command directly.
type stdio struct {
	in, out, err *os.File
}

// Main runs the moat command line with args (without the program name) and
// returns the exit status for os.Exit.
func Main(args []string) int {
	return execute(args, stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
}

// execute runs one invocation and prints the one-line error, if any.
func execute(args []string, std stdio) int {
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	root := newRoot(std)
	root.SetArgs(args)
	code, msg := exitCode(root.Execute())
	if msg != "" {
		fmt.Fprintln(std.err, msg)
	}
	return code
}
