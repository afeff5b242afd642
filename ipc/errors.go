package ipc

import "fmt"

// Error codes of the errors a [Server] and [Client] produce. A handler may
// use any other code of its own.
const (
	// CodeUsage is a mistake in the arguments: an unknown flag, a missing
	// value, an extra positional argument, a value of the wrong type. The
	// command-line client exits 2 for it.
	CodeUsage = "usage"
	// CodeUnknownCommand is a name no command is registered under.
	CodeUnknownCommand = "unknown_command"
	// CodeBadRequest is a frame the server could not read: malformed,
	// truncated, empty, or of another protocol version.
	CodeBadRequest = "bad_request"
	// CodeTooLarge is a frame over MaxFrameSize.
	CodeTooLarge = "too_large"
	// CodePanic is a handler that panicked.
	CodePanic = "panic"
	// CodeFailed is a handler's error that is not an *Error.
	CodeFailed = "failed"
	// CodeInternal is the host failing to encode a response.
	CodeInternal = "internal"
	// CodeUnavailable is a client that cannot reach the server.
	CodeUnavailable = "unavailable"
)

// Error is a typed error carried from a handler to the caller: a short,
// machine-readable Code and a human-readable Message. A handler returns
// one (or wraps one) to choose the code; any other error reaches the
// caller with [CodeFailed] and its Error text. The zero value has an empty
// code and message.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns "ipc: CODE: MESSAGE".
func (e *Error) Error() string { return "ipc: " + e.Code + ": " + e.Message }

// Is reports whether target is an *Error with the same code, so
// errors.Is(err, &ipc.Error{Code: ipc.CodeUsage}) tests the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}
