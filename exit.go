package moat

import (
	"os"
	"syscall"
)

// ExitError reports a command that did not exit with status 0. It mirrors
// [os/exec.ExitError]. The zero value is not meaningful.
type ExitError struct {
	// ProcessState describes the sandbox's supervisor process, whose exit
	// status mirrors the command's: its code, or 128+N after signal N.
	*os.ProcessState

	// Stderr holds part of the standard error output, when the command was
	// run by [Cmd.Output] with Stderr unset.
	Stderr []byte

	code   int
	signal syscall.Signal
	reason string
}

// ExitCode returns the command's exit code, or -1 if a signal killed it.
func (e *ExitError) ExitCode() int {
	if e.signal != 0 {
		return -1
	}
	return e.code
}

// Signal returns the signal that killed the command, or nil.
func (e *ExitError) Signal() os.Signal {
	if e.signal == 0 {
		return nil
	}
	return e.signal
}

// StatusCode returns the code a shell would report: the exit code, or 128+N
// for a command killed by signal N.
func (e *ExitError) StatusCode() int {
	if e.signal != 0 {
		return 128 + int(e.signal)
	}
	return e.code
}

// Reason says why moat ended the command ("timeout", "disk limit", "sandbox
// closed"), or is empty when the command ended by itself.
func (e *ExitError) Reason() string { return e.reason }

func (e *ExitError) Error() string {
	var s string
	if e.signal != 0 {
		s = "signal: " + e.signal.String()
	} else {
		s = "exit status " + itoa(int64(e.code))
	}
	if e.reason != "" {
		s += " (" + e.reason + ")"
	}
	return s
}
