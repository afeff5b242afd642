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
	// prepare configures proc, an *exec.Cmd whose stdio the caller set, to
	// run cmd through the platform's helper.
	prepare(cmd *command, proc execCmd) (launch, error)
	// kill ends every process of the sandbox.
	kill()
	close() error
	// execRoots are the paths under which the sandbox may execute files.
	execRoots() []string
	// namespaceFailure reports whether err, from starting a helper, means
	// the host refused the namespaces; if so the engine has stopped using
	// them and a retry runs without.
	namespaceFailure(err error) bool
}

// errNamespaces asks Cmd.start to retry without namespaces.
var errNamespaces = errors.New("moat: namespaces refused by the host")

// launch is one started command on the platform side.
type launch interface {
	// started completes the start after proc.Start; pid is the helper's.
	started(pid int) error
	// finished reports how the command ended, after proc.Wait.
	finished() outcome
	// kill ends the command's whole process tree.
	kill()
	abort()
}

// command is a fully resolved command line.
type command struct {
	path       string
	args       []string
	env        []string
	dir        string
	extraFiles []*os.File
	pty        bool
}

// outcome is how a command ended: exited is false when its supervisor died
// without reporting.
type outcome struct {
	exited bool
	exit   int
	signal sigNum
}
