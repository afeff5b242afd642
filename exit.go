package moat

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"syscall"

	"github.com/moat-sandbox/moat/internal/spec"
)

// ExitError reports a command that did not exit with status 0. It mirrors
// [os/exec.ExitError]. The zero value is not meaningful.
type ExitError struct {
	// ProcessState describes the command.
	*os.ProcessState

	// Stderr holds part of the standard error output, when the command was
	// run by [Cmd.Output] with Stderr unset.
	Stderr []byte

	reason string
	limit  string
}

// Limit names the limit that ended the command, as its limit [Refusal]'s
// Subject says it ("memory", "disk", "disk-inodes", "cpu-time",
// "file-size", "timeout"); empty when no limit did.
func (e *ExitError) Limit() string { return e.limit }

// Signal returns the signal that killed the command, or nil.
func (e *ExitError) Signal() os.Signal {
	if e.ProcessState == nil {
		return nil
	}
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return nil
}

// StatusCode returns the code a shell would report: the exit code, or 128+N
// for a command killed by signal N.
func (e *ExitError) StatusCode() int {
	if s, ok := e.Signal().(syscall.Signal); ok {
		return 128 + int(s)
	}
	if e.ProcessState == nil {
		return -1
	}
	return e.ExitCode()
}

// Reason says why moat ended the command, or is empty when it ended by
// itself. A limit kill (memory, disk, disk-inodes, cpu-time, file-size,
// timeout) reads like its [Refusal]: "limit: timeout: killed after 1s
// (--timeout DURATION, Limits.Timeout)"; otherwise, say, "sandbox closed".
func (e *ExitError) Reason() string { return e.reason }

// Error is the process state, as os/exec words it, and the reason the
// sandbox ended the command, if it did.
func (e *ExitError) Error() string {
	s := "exit status unknown"
	if e.ProcessState != nil {
		s = e.ProcessState.String()
	}
	if e.reason != "" {
		s += " (" + e.reason + ")"
	}
	return s
}

// errNamespaces asks Cmd.start to retry without namespaces.
var errNamespaces = errors.New("namespaces refused by the host")

// startError converts a backend's failure to start a command.
func startError(err error) error {
	var se *spec.StartError
	if !errors.As(err, &se) {
		return errorf("%w", err)
	}
	if se.Redirected {
		return &commandError{msg: se.Msg, kind: ErrGrantRedirected, cause: se}
	}
	switch se.Code {
	case 127:
		return &commandError{msg: se.Msg, kind: exec.ErrNotFound, cause: se}
	case 126:
		return &commandError{msg: se.Msg, kind: errPermission, cause: se}
	}
	return &commandError{msg: se.Msg, cause: se}
}

var errPermission = fs.ErrPermission

// commandError is a command that cannot be found or may not be executed in
// the sandbox. It matches exec.ErrNotFound or fs.ErrPermission.
type commandError struct {
	msg   string
	kind  error // exec.ErrNotFound, fs.ErrPermission, or nil
	cause error // the platform's own error, if any
}

func (e *commandError) Error() string { return e.msg }

func (e *commandError) Unwrap() error { return e.kind }
