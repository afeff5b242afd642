package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/settings"
)

// usageError is a mistake on the command line. It exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError; format should read "subject: problem". An
// error among args is worded by flagWords.
func usagef(format string, args ...any) error {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = flagWords(err)
		}
	}
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// flagWords returns err's message with the setting a *moat.SettingError
// in its chain concerns named as the command does: its flag before the
// Config field the library names it by, "--home (Config.Home)".
func flagWords(err error) string {
	msg := err.Error()
	var se *moat.SettingError
	if errors.As(err, &se) {
		if field := settings.Field(se.Setting); field != "" {
			msg = strings.Replace(msg, field, settings.Words(se.Setting), 1)
		}
	}
	return msg
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
// problem". The library's errors carry no prefix: the command, their
// outermost caller, adds it here. The loop drops one that an error of a
// package not yet converted still carries (internal/proxy, the backends).
func errorLine(err error) string {
	msg := strings.Join(strings.Fields(flagWords(err)), " ")
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
