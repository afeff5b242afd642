package moat

import (
	"errors"
	"os"
)

// engine is the platform's enforcement of one sandbox's policy.
type engine interface {
	// missing lists what Strict enforcement needs and the host lacks.
	missing() []string
	report() Report
	// take returns a helper ready to receive one command.
	take() (launch, error)
	close() error
	// execRoots are the paths under which the sandbox may execute files.
	execRoots() []string
	// namespaceFailure reports whether err, from starting a command,
	// means the host refused the namespaces; if so the engine has stopped
	// using them and a retry runs without.
	namespaceFailure(err error) bool
}

// launch is one helper process, running at most one command.
type launch interface {
	// run sends the command and its descriptors (0, 1, 2, extra files)
	// and returns once it runs.
	run(cmd *command, files []*os.File) error
	// process is what Cmd.Process reports.
	process() *os.Process
	// wait reaps the helper and reports how the command ended.
	wait() (outcome, *os.ProcessState)
	// kill ends the command's whole process tree.
	kill()
}

// command is a fully resolved command line.
type command struct {
	path string
	args []string
	env  []string
	dir  string
	pty  bool
}

// outcome is how a command ended: exited is false when its supervisor died
// without reporting.
type outcome struct {
	exited bool
	exit   int
	signal sigNum
}

// errNamespaces asks Cmd.start to retry without namespaces.
var errNamespaces = errors.New("moat: namespaces refused by the host")
