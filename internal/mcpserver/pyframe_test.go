package mcpserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func frame(body string) []byte {
	b := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	return append(b, body...)
}

func TestDecodeResult(t *testing.T) {
	const good = `{"nonce":"ab","status":"ok","value":"1","error":"","stdout":"x","stderr":"","stdout_truncated":false,"stderr_truncated":false}`
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"good", good, true},
		{"error status", `{"nonce":"ab","status":"error","error":"tb"}`, true},
		{"wrong nonce", `{"nonce":"cd","status":"ok"}`, false},
		{"no nonce", `{"status":"ok"}`, false},
		{"unknown field", `{"nonce":"ab","status":"ok","extra":1}`, false},
		{"unknown status", `{"nonce":"ab","status":"maybe"}`, false},
		{"two objects", good + good, false},
		{"trailing junk", good + "x", false},
		{"array", `[1]`, false},
		{"wrong type", `{"nonce":"ab","status":"ok","stdout":5}`, false},
		{"not json", `nonce`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeResult([]byte(tc.body), "ab")
			if (err == nil) != tc.ok {
				t.Errorf("decodeResult(%s): err %v, want ok %v", tc.body, err, tc.ok)
			}
			if err != nil && !errors.Is(err, errFrame) {
				t.Errorf("error %v is not errFrame", err)
			}
		})
	}
}

func TestReadFrameBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"good", frame("{}"), true},
		{"empty", frame(""), false},
		{"over the bound", frame(string(make([]byte, 65))), false},
		{"short body", frame("{}")[:5], false},
		{"short header", []byte{0, 0}, false},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readFrame(bytes.NewReader(tc.in), 64)
			if (err == nil) != tc.ok {
				t.Errorf("readFrame: err %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// FuzzResultFrame: any bytes from the sandbox are read within the bound
// and either decode with the nonce or are refused; never a panic.
func FuzzResultFrame(f *testing.F) {
	f.Add(frame(`{"nonce":"ab","status":"ok"}`))
	f.Add(frame(`{"nonce":"ab","status":"error","value":null}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add(frame(`{"nonce":"ab","status":"ok"}{}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		body, err := readFrame(bytes.NewReader(in), 1024)
		if err != nil {
			return
		}
		if len(body) > 1024 {
			t.Fatalf("a body of %d bytes passed the bound", len(body))
		}
		r, err := decodeResult(body, "ab")
		if err == nil && (r.Nonce != "ab" || r.Status != "ok" && r.Status != "error") {
			t.Fatalf("accepted %+v", r)
		}
	})
}
