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
	// start runs cmd in the sandbox with files as its descriptors 0, 1, 2
	// and up.
	start(cmd *command, files []*os.File) (launch, error)
	close() error
	// execRoots are the paths under which the sandbox may execute files.
	execRoots() []string
	// namespaceFailure reports whether err, from starting a command,
	// means the host refused the namespaces; if so the engine has stopped
	// using them and a retry runs without.
	namespaceFailure(err error) bool
	// openTerminal makes a pseudo-terminal pair inside the sandbox, when
	// the platform can; ok is false when it cannot.
	openTerminal() (master, slave *os.File, ok bool, err error)
}

// launch is one started command.
type launch interface {
	// process is the command's process, a child of this one.
	process() *os.Process
	// wait reaps the command and ends what is left of its process tree.
	wait() (*os.ProcessState, error)
	// kill ends the command's process tree.
	kill()
	// reason, after wait, says why the sandbox itself ended the command
	// (a limit only it watches), or is empty.
	reason() string
}

// command is a fully resolved command line.
type command struct {
	path string
	args []string
	env  []string
	dir  string
	pty  bool
}

// errNamespaces asks Cmd.start to retry without namespaces.
var errNamespaces = errors.New("moat: namespaces refused by the host")
