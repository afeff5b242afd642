package session

import "fmt"

// errorf is an *Error with code and the formatted message; sandbox-made
// text in args is quoted by the caller's %q.
func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// settingErrorf is an *Error with code that names the policy setting
// involved.
func settingErrorf(code, setting, format string, args ...any) *Error {
	return &Error{Code: code, Setting: setting, Message: fmt.Sprintf(format, args...)}
}

// internalError wraps a failure of the host side (moat.New, Close) as
// CodeInternal, with its subject.
func internalError(subject string, err error) *Error {
	return &Error{Code: CodeInternal, Message: subject + ": " + err.Error()}
}

// errClosed is the error of any call on a closed session.
func errClosed(id string) *Error {
	return errorf(CodeClosed, "session %q is closed (idle timeout, lifetime limit, or closed by a client); create a new one", id)
}
