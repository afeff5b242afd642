package fileserve

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzReadFrame: any byte stream either yields frames within the bound,
// each what the header announced, or an error; never a panic or a frame
// past the bound.
func FuzzReadFrame(f *testing.F) {
	var ok bytes.Buffer
	WriteFrame(&ok, Reply{ID: 1}, 1<<10)
	f.Add(ok.Bytes())
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, '{'})
	f.Add([]byte{0, 0, 0, 2, '{', '}', 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			before := r.Len()
			fr, err := ReadFrame(r, 64)
			if err != nil {
				return
			}
			if len(fr) > 64 || int(binary.BigEndian.Uint32(b[len(b)-before:])) != len(fr) {
				t.Fatalf("frame of %d bytes", len(fr))
			}
		}
	})
}

func TestStrict(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"id":1}`, true},
		{`{"id":1} `, true},
		{`{"id":1,"extra":2}`, false},
		{`{"id":1}{"id":2}`, false},
		{`{"id":1} x`, false},
		{`{"id":"1"}`, false},
		{`{"id":1,"error":{"code":"x","more":1}}`, false},
		{``, false},
	} {
		var r Reply
		if err := Strict([]byte(tc.in), &r); (err == nil) != tc.ok {
			t.Errorf("Strict(%q) = %v; want ok %v", tc.in, err, tc.ok)
		}
	}
}

func TestWriteFrameBound(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFrame(&b, Request{Path: "0123456789"}, 10); err == nil || b.Len() != 0 {
		t.Errorf("a frame past its bound was written: %v, %d bytes", err, b.Len())
	}
}
