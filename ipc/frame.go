package ipc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxFrameSize bounds the JSON body of one frame, request or response:
// 16 MiB. Piped input travels base64-encoded inside it, so a call carries
// at most about 12 MiB of it.
const MaxFrameSize = 16 << 20

// Version is the protocol version every frame carries; a request of
// another version gets a [CodeBadRequest] error.
const Version = 1

// request is one call, as it travels from the client to the server. Argv
// is the command-line form, parsed by the server against the command's
// argument type; Args is the typed form (a JSON object), used when Argv is
// nil. Help asks for the command's usage instead (or, with no command,
// the list of commands).
type request struct {
	V       int             `json:"v"`
	ID      uint64          `json:"id"`
	Command string          `json:"cmd"`
	Argv    argList         `json:"argv"`
	Args    json.RawMessage `json:"args,omitempty"`
	Stdin   []byte          `json:"stdin,omitempty"`
	Piped   bool            `json:"piped,omitempty"`
	Dir     string          `json:"dir,omitempty"`
	Help    bool            `json:"help,omitempty"`
}

// argList is a request's command line. It decodes word by word and stops
// past MaxArgs words, so a frame of 16 MiB of empty words ("" is three
// bytes) cannot make the host build millions of them.
type argList []string

// UnmarshalJSON decodes a JSON array of strings, or null, of at most
// MaxArgs words.
func (a *argList) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*a = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return fmt.Errorf("argv: want an array of strings")
	}
	out := argList{}
	for dec.More() {
		if len(out) == MaxArgs {
			return fmt.Errorf("argv: more than %d words", MaxArgs)
		}
		var w string
		if err := dec.Decode(&w); err != nil {
			return fmt.Errorf("argv: %v", err)
		}
		out = append(out, w)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("argv: %v", err)
	}
	*a = out
	return nil
}

// response answers the request with the same ID: Result (JSON) or Error.
type response struct {
	V      int             `json:"v"`
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Frame errors of readFrame.
var (
	errEmptyFrame = errors.New("empty frame")
	errTruncated  = errors.New("truncated frame")
)

// frameTooLarge is a frame whose length exceeds MaxFrameSize.
type frameTooLarge struct{ n uint64 }

func (e frameTooLarge) Error() string {
	return fmt.Sprintf("frame of %d bytes exceeds the %d-byte limit", e.n, MaxFrameSize)
}

// writeFrame encodes v as one frame on w, with a single Write.
func writeFrame(w io.Writer, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(body) > MaxFrameSize {
		return frameTooLarge{uint64(len(body))}
	}
	buf := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	_, err = w.Write(append(buf, body...))
	return err
}

// readFrame reads one frame's body from r. It returns io.EOF at a clean
// end between frames, errTruncated when r ends inside one, errEmptyFrame
// for a zero length and a frameTooLarge, without reading the body, for a
// length over MaxFrameSize.
func readFrame(r io.Reader) ([]byte, error) {
	n, err := readLength(r)
	if err != nil {
		return nil, err
	}
	return readBody(r, n)
}

// readLength reads a frame's length and checks it (see readFrame).
func readLength(r io.Reader) (int, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, errTruncated
		}
		return 0, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	switch {
	case n == 0:
		return 0, errEmptyFrame
	case n > MaxFrameSize:
		return 0, frameTooLarge{uint64(n)}
	}
	return int(n), nil
}

// readBody reads a body of n bytes. Memory is allocated only as the body
// arrives, so a frame that claims 16 MiB and sends nothing costs nothing.
func readBody(r io.Reader, n int) ([]byte, error) {
	var b []byte
	var chunk [32 << 10]byte
	for len(b) < n {
		want := min(n-len(b), len(chunk))
		got, err := io.ReadFull(r, chunk[:want])
		b = append(b, chunk[:got]...)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errTruncated
			}
			return nil, err
		}
	}
	return b, nil
}

// decodeRequest decodes a frame's body as a request of this Version.
func decodeRequest(body []byte) (request, error) {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return req, fmt.Errorf("malformed request: %v", err)
	}
	if req.V != Version {
		return req, fmt.Errorf("protocol version %d, want %d", req.V, Version)
	}
	return req, nil
}
