package moat

import "os"

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
}

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
