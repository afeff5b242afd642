package serve

import (
	"context"
	"errors"
	"net/http"

	"github.com/moat-sandbox/moat/internal/session"
)

// Codes the HTTP face adds to the session core's.
const (
	codeUnauthorized     = "unauthorized"       // 401
	codeMethodNotAllowed = "method_not_allowed" // 405
)

// statusOf maps each stable code to its one HTTP status (docs/serve.md).
var statusOf = map[string]int{
	session.CodeBadRequest:    http.StatusBadRequest,
	codeUnauthorized:          http.StatusUnauthorized,
	session.CodeWiden:         http.StatusForbidden,
	session.CodePathRefused:   http.StatusForbidden,
	session.CodeNotFound:      http.StatusNotFound,
	session.CodeUnknownPolicy: http.StatusNotFound,
	codeMethodNotAllowed:      http.StatusMethodNotAllowed,
	session.CodeBusy:          http.StatusConflict,
	session.CodeNotRegular:    http.StatusConflict,
	session.CodeClosed:        http.StatusGone,
	session.CodeTooLarge:      http.StatusRequestEntityTooLarge,
	session.CodeStart:         http.StatusUnprocessableEntity,
	session.CodeTooMany:       http.StatusTooManyRequests,
	session.CodeMemoryBudget:  http.StatusTooManyRequests,
	session.CodeInternal:      http.StatusInternalServerError,
}

// errorBody is an error on the wire: {"error": {...}}.
type errorBody struct {
	Error errorJSON `json:"error"`
}

type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Setting string `json:"setting,omitempty"`
}

// apiError turns any error into a session.Error with a stable code: the
// core's own as they are, anything else internal.
func apiError(err error) *session.Error {
	var se *session.Error
	if errors.As(err, &se) {
		if _, ok := statusOf[se.Code]; ok {
			return se
		}
		return &session.Error{Code: session.CodeInternal, Message: se.Message, Setting: se.Setting}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &session.Error{Code: session.CodeBusy, Message: "the request was cancelled before it finished"}
	}
	return &session.Error{Code: session.CodeInternal, Message: err.Error()}
}

func errf(code, msg string) *session.Error { return &session.Error{Code: code, Message: msg} }

// writeError answers err as its JSON body and status.
func writeError(w http.ResponseWriter, err error) {
	se := apiError(err)
	writeJSON(w, statusOf[se.Code], errorBody{errorJSON{Code: se.Code, Message: se.Message, Setting: se.Setting}})
}
