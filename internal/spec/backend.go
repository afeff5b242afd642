package spec

import "os"

// Backend enforces one Policy for every command of a sandbox. Its methods
// are safe for concurrent use.
type Backend interface {
	// Missing lists what Strict enforcement needs and the host lacks.
	Missing() []string
	// Report says which layers are active.
	Report() Report
	// Start runs c in the sandbox with files as its descriptors 0, 1, 2
	// and up. A failure to start is a *StartError.
	Start(c *Command, files []*os.File) (Process, error)
	// ExecRoots are the paths under which the sandbox may execute files.
	ExecRoots() []string
	// Fallback reports whether err, from Start, means the host refused
	// the namespaces; if so the backend has stopped using them and a
	// retry runs without.
	Fallback(err error) bool
	// OpenTerminal makes a pseudo-terminal pair inside the sandbox; ok is
	// false where the backend cannot.
	OpenTerminal() (master, slave *os.File, ok bool, err error)
	// Refusals returns what the sandbox's supervisor recorded as refused
	// since the last call: host Unix sockets it tried to reach, files
	// write-xor-execute kept it from executing, sockets it may not open.
	Refusals() []SandboxRefusal
	// SupervisesExec reports whether Refusals names every exec that
	// write-xor-execute refuses, in any process of the sandbox; when
	// false, such a refusal shows only as the program's own error.
	SupervisesExec() bool
	// Close kills what is left of the sandbox and releases its host
	// objects.
	Close() error
}

// Kinds of SandboxRefusal.
const (
	// RefusedUnixSocket is a host Unix socket the sandbox tried to reach;
	// the subject is its path.
	RefusedUnixSocket = "unix-socket"
	// RefusedExec is a file the sandbox wrote and tried to execute; the
	// subject is its path, resolved, as the sandbox sees it.
	RefusedExec = "exec"
	// RefusedSocket is a socket the sandbox may not open; the subject
	// names its family and type, the detail says what it may open.
	RefusedSocket = "socket"
)

// SandboxRefusal is one refusal a backend's supervisor recorded. The zero
// value records nothing.
type SandboxRefusal struct {
	// Kind is one of RefusedUnixSocket, RefusedExec, RefusedSocket.
	Kind    string
	Subject string
	// Detail, when not empty, says why.
	Detail string
	// Dropped, when not zero, makes this a count instead: that many more
	// refusals of Kind were made than the supervisor's bounded record
	// kept; Subject and Detail are then empty.
	Dropped int
}

// Process is one started command.
type Process interface {
	// Process is the command's process, a child of this one.
	Process() *os.Process
	// Wait reaps the command and ends what is left of its process tree.
	Wait() (*os.ProcessState, error)
	// Kill ends the command's process tree.
	Kill()
	// Reason, after Wait, says why the sandbox itself ended the command
	// (a limit only it watches), or is empty.
	Reason() string
}

// Command is a fully resolved command line. The zero value runs nothing.
type Command struct {
	Path string
	Args []string
	Env  []string
	Dir  string
	// Pty makes descriptor 0 the controlling terminal.
	Pty bool
}

// StartError is a failure to set up the sandbox or start the command.
// The zero value is an unexplained failure with code 0.
type StartError struct {
	// Code is 125, or 126 and 127 for a command that cannot be executed
	// or found, as a shell would exit.
	Code int
	Msg  string
	// Namespaces marks a failure to set up the namespaces.
	Namespaces bool
	// Redirected marks a grant that no longer leads where it was checked.
	Redirected bool
}

// Error returns Msg.
func (e *StartError) Error() string { return e.Msg }
