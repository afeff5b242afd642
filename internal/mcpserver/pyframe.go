package mcpserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The interpreter's frames: a 4-byte big-endian length, then one JSON
// object. A result frame comes from the sandbox: it is bounded and decoded
// strictly, and must echo the request's nonce.

// maxResultFrame bounds a result frame: the driver sends at most 128 KiB
// of text per field, which JSON's \u escapes can grow sixfold.
const maxResultFrame = 4 << 20

// pyRequest is one call to the interpreter.
type pyRequest struct {
	Nonce string `json:"nonce"`
	Code  string `json:"code"`
}

// pyResult is the driver's answer to one call.
type pyResult struct {
	Nonce           string  `json:"nonce"`
	Status          string  `json:"status"` // "ok" or "error"
	Value           *string `json:"value"`
	Error           string  `json:"error"`
	Stdout          string  `json:"stdout"`
	Stderr          string  `json:"stderr"`
	StdoutTruncated bool    `json:"stdout_truncated"`
	StderrTruncated bool    `json:"stderr_truncated"`
}

// errFrame is a result frame that breaks the protocol.
var errFrame = errors.New("malformed result frame")

// encodeFrame frames v.
func encodeFrame(v any) ([]byte, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4, 4+len(js))
	binary.BigEndian.PutUint32(out, uint32(len(js)))
	return append(out, js...), nil
}

// readFrame reads one frame's body, at most max bytes.
func readFrame(r io.Reader, max int) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if n == 0 || int64(n) > int64(max) {
		return nil, fmt.Errorf("%w: length %d", errFrame, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// decodeResult decodes a result frame's body strictly: one JSON object of
// known fields, a known status, and the nonce of the request.
func decodeResult(body []byte, nonce string) (pyResult, error) {
	var r pyResult
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return pyResult{}, fmt.Errorf("%w: %v", errFrame, err)
	}
	if dec.More() {
		return pyResult{}, fmt.Errorf("%w: data after the object", errFrame)
	}
	if _, err := dec.Token(); err != io.EOF {
		return pyResult{}, fmt.Errorf("%w: data after the object", errFrame)
	}
	if r.Nonce != nonce {
		return pyResult{}, fmt.Errorf("%w: the nonce does not match the request's", errFrame)
	}
	if r.Status != "ok" && r.Status != "error" {
		return pyResult{}, fmt.Errorf("%w: status %q", errFrame, r.Status)
	}
	return r, nil
}
