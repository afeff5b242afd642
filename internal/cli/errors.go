package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/moat-sandbox/moat"
)

// usageError is a mistake on the command line. It exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError; format should read "subject: problem".
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// failure is moat itself failing, as opposed to the command it runs. It
// exits 125 whatever error it wraps.
type failure struct{ err error }

func (e *failure) Error() string { return e.err.Error() }
func (e *failure) Unwrap() error { return e.err }

// failf returns a failure; format should read "subject: problem".
func failf(format string, args ...any) error {
	return &failure{err: fmt.Errorf(format, args...)}
}

// fail marks err as moat's own failure; nil stays nil.
func fail(err error) error {
	if err == nil {
		return nil
	}
	return &failure{err: err}
}

// trimMoat drops the "moat: " prefix of a library error that a usage error
// wraps again.
func trimMoat(err error) string { return strings.TrimPrefix(err.Error(), "moat: ") }

// exitStatus ends moat with code and prints nothing: the outcome was
// already reported, as by doctor. cause, if any, is the error it stands
// for, such as the command's *moat.ExitError, for --report-json.
type exitStatus struct {
	code  int
	cause error
}

func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }
func (e *exitStatus) Unwrap() error { return e.cause }

// errorLine formats err as moat's one-line message, "moat: subject:
// problem", whether or not err already carries the "moat: " prefix.
func errorLine(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	for strings.HasPrefix(msg, "moat: ") {
		msg = strings.TrimPrefix(msg, "moat: ")
	}
	return "moat: " + msg
}

// sandboxError turns what moat.New returned into moat's own failure, with
// a hint when the host lacks a layer.
func sandboxError(err error) error {
	var un *moat.UnsupportedError
	if errors.As(err, &un) {
		return failf("host cannot enforce the sandbox: %v (see moat doctor, or pass --best-effort to run with less isolation)", strings.Join(un.Missing, "; "))
	}
	return fail(err)
}
