package fileserve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Env is the environment marker that selects the file server's role when
// this binary starts (internal/reexec); its value is "1".
const Env = "_MOAT_FILESERVE"

// ListBudget bounds the encoded size of a list reply's entries: a listing
// that would pass it stops early and is marked truncated.
const ListBudget = 8 << 20

// MaxPath bounds a request's path, in bytes.
const MaxPath = 4096

// Config is what the host gives the server at its start, as JSON in
// argv[2]. The zero value serves nothing.
type Config struct {
	// WorkDir is the working directory, as the sandbox sees it: relative
	// paths are relative to it.
	WorkDir string `json:"workdir"`
	// Places are the directories a path may lie in; nil means none.
	Places []Place `json:"places"`
	// MaxFileBytes bounds a write; MaxReadBytes a read; MaxEntries a
	// listing. Zero or negative refuses every such call.
	MaxFileBytes int64 `json:"max_file_bytes"`
	MaxReadBytes int64 `json:"max_read_bytes"`
	MaxEntries   int   `json:"max_entries"`
}

// Place is one directory the file API serves: absolute and clean, as the
// sandbox sees it. Writable false serves it read-only.
type Place struct {
	Path     string `json:"path"`
	Writable bool   `json:"writable"`
}

// The operations of a Request.
const (
	OpRead  = "read"
	OpWrite = "write"
	OpList  = "list"
	OpStat  = "stat"
)

// Request is one call from the host. The zero value is not a valid call.
type Request struct {
	// ID is echoed by the reply.
	ID uint64 `json:"id"`
	// Op is one of the Op* constants.
	Op string `json:"op"`
	// Path is absolute in the sandbox's view or relative to the working
	// directory; empty means the working directory.
	Path string `json:"path"`
	// Max bounds the bytes a read returns.
	Max int64 `json:"max,omitempty"`
	// Data is what a write writes.
	Data []byte `json:"data,omitempty"`
	// Mode is a write's permission bits (masked to 0777).
	Mode uint32 `json:"mode,omitempty"`
}

// Reply answers one Request. Exactly one of Error and the op's result is
// set: read returns Info and Data, write and stat Info, list Entries (and
// Truncated).
type Reply struct {
	ID        uint64 `json:"id"`
	Error     *Fault `json:"error,omitempty"`
	Info      *Info  `json:"info,omitempty"`
	Data      []byte `json:"data,omitempty"`
	Entries   []Info `json:"entries,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Fault is a failed call: a stable code (the Code* constants), the errno
// that caused it when one did, and the type of file found when the code
// is CodeNotRegular. The host writes the words; a Fault carries none.
type Fault struct {
	Code  string `json:"code"`
	Errno int    `json:"errno,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// The codes of a Fault (the same strings as internal/session's).
const (
	CodeNotFound   = "not_found"
	CodeRefused    = "path_refused"
	CodeNotRegular = "not_regular_file"
	CodeTooLarge   = "too_large"
	CodeBadRequest = "bad_request"
	CodeInternal   = "internal"
)

// Info describes one file as the sandbox sees it, without following a
// final link. The zero value describes nothing.
type Info struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Type    string `json:"type"` // see the Type* constants
	Size    int64  `json:"size"`
	Mode    uint32 `json:"mode"` // permission bits, at most 07777
	MTimeNS int64  `json:"mtime_ns"`
	Target  string `json:"target,omitempty"` // a link's target, as data
}

// The types of an Info.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeFIFO    = "fifo"
	TypeSocket  = "socket"
	TypeDevice  = "device"
	TypeOther   = "other"
)

// ValidType reports whether t is one of the Type* constants.
func ValidType(t string) bool {
	switch t {
	case TypeFile, TypeDir, TypeSymlink, TypeFIFO, TypeSocket, TypeDevice, TypeOther:
		return true
	}
	return false
}

// ErrFrameTooLarge is a frame whose announced length passes the reader's
// bound.
var ErrFrameTooLarge = errors.New("frame too large")

// WriteFrame writes v as one frame: its JSON encoding, at most max bytes,
// after its length.
func WriteFrame(w io.Writer, v any, max int64) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if int64(len(b)) > max || len(b) > 1<<31-1 {
		return fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, len(b))
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err = w.Write(buf)
	return err
}

// ReadFrame reads one frame's body, refusing one longer than max before
// reading it. A stream that ends before the first byte returns io.EOF; one
// that ends inside a frame io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, max int64) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int64(binary.BigEndian.Uint32(hdr[:]))
	if n > max {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrFrameTooLarge, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// Strict decodes one JSON object from b into v, refusing unknown fields
// and anything after the object.
func Strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the object")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("data after the object")
	}
	return nil
}
