package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"reflect"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// Body limits: a file write carries up to 16 MiB of content (more in
// base64 and JSON escapes, hence the room), everything else 1 MiB.
const (
	maxFileBody  = 16 << 20
	maxOtherBody = 1 << 20
	// maxFileContent bounds the decoded content of one file write.
	maxFileContent = 16 << 20
	// bodyReadTime is how long a client has to send a body of up to
	// 1 MiB once its headers are in; each further MiB adds a second.
	bodyReadTime = 10 * time.Second
)

// fileBodyLimit is the body limit of a file write: 16 MiB of content as
// base64 (4/3) plus its JSON.
const fileBodyLimit = maxFileBody/3*4 + 4 + maxOtherBody

// bodyLimit is the most a request's body may carry: a file write's
// (PUT's) or any other's.
func bodyLimit(r *http.Request) int64 {
	if r.Method == http.MethodPut {
		return fileBodyLimit
	}
	return maxOtherBody
}

// bodyDeadline is how long r's client has to send its body.
func (s *Server) bodyDeadline(r *http.Request) time.Duration {
	if s.bodyTime > 0 {
		return s.bodyTime
	}
	n := r.ContentLength
	if limit := bodyLimit(r); n < 0 || n > limit {
		n = limit
	}
	return bodyReadTime + time.Duration(n>>20)*time.Second
}

// readBody reads r's body whole, at most bodyLimit bytes, under the bound
// on bodies read at once and within bodyDeadline, before the request
// takes a turn: a client that sends its body slowly holds no turn. It
// returns the body to read and the release of the body slot, which the
// caller calls once the request has its turn (or will not get one).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (io.ReadCloser, func(), error) {
	limit := bodyLimit(r)
	if r.ContentLength > limit {
		return nil, nil, errf(session.CodeTooLarge, fmt.Sprintf("the request body is over %d bytes", limit))
	}
	if !acquire(r.Context(), s.bodies, s.wait) {
		return nil, nil, errf(session.CodeBusy, "the server is reading too many request bodies; retry")
	}
	release := func() { <-s.bodies }
	rc := http.NewResponseController(w)
	d := s.bodyDeadline(r)
	_ = rc.SetReadDeadline(time.Now().Add(d))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		release()
		var tooBig *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &tooBig):
			return nil, nil, errf(session.CodeTooLarge, fmt.Sprintf("the request body is over %d bytes", limit))
		case errors.As(err, &ne) && ne.Timeout():
			return nil, nil, errf(session.CodeBadRequest, fmt.Sprintf("the request body did not arrive within %v", d))
		}
		return nil, nil, errf(session.CodeBadRequest, "reading the request body: "+trimmed(err.Error()))
	}
	// net/http clears the deadline as the body ends, before it reads on
	// in the background to see the client leave.
	return io.NopCloser(bytes.NewReader(body)), release, nil
}

// decodeBody decodes r's body (read whole by readBody), at most limit
// bytes, as exactly one JSON value into v, refusing unknown fields:
// bad_request or too_large.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return errf(session.CodeBadRequest, fmt.Sprintf("Content-Type %q: send application/json", trimmed(ct)))
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errf(session.CodeTooLarge, fmt.Sprintf("the request body is over %d bytes", limit))
		}
		return errf(session.CodeBadRequest, "reading the request body: "+trimmed(err.Error()))
	}
	return decodeJSON(body, v)
}

// decodeJSON decodes exactly one JSON value from body into v, refusing
// unknown fields, keys spelled in another case than v's, keys given twice,
// and anything after the value.
func decodeJSON(body []byte, v any) error {
	if err := checkKeys(body, reflect.TypeOf(v)); err != nil {
		return errf(session.CodeBadRequest, "the request body: "+err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errf(session.CodeBadRequest, "the request body is empty; send a JSON object")
		}
		return errf(session.CodeBadRequest, "the request body: "+trimmed(err.Error()))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errf(session.CodeBadRequest, "the request body has more after its JSON value; send one")
	}
	return nil
}

// trimmed bounds s (which may echo client input) for an error message.
func trimmed(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// writeJSON answers v with status, giving a slow reader a bounded time.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":{"code":"internal","message":"encoding the response failed"}}`)
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeTime))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// writeTime bounds the writing of one response or one streamed event.
const writeTime = 30 * time.Second
