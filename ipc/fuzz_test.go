package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"regexp"
	"strings"
	"testing"
)

// FuzzReadFrame: the frame decoder never panics, never returns a body
// over the limit, and what it accepts survives a round trip.
func FuzzReadFrame(f *testing.F) {
	f.Add(frame(`{"v":1,"id":1,"cmd":"counter","argv":["a","--b=c"]}`))
	f.Add(frame(`{"v":1,"id":2,"cmd":"x","stdin":"aGk=","piped":true}`))
	f.Add(frame(""))
	f.Add([]byte{0, 0})
	f.Add(binary.BigEndian.AppendUint32(nil, MaxFrameSize+1))
	f.Add(append(frame(`{"v":1}`), frame(`{nope`)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for {
			body, err := readFrame(r)
			if err != nil {
				return
			}
			if len(body) == 0 || len(body) > MaxFrameSize {
				t.Fatalf("readFrame accepted a body of %d bytes", len(body))
			}
			req, err := decodeRequest(body)
			if err != nil {
				continue
			}
			var buf bytes.Buffer
			if err := writeFrame(&buf, &req); err != nil {
				t.Fatalf("re-encoding an accepted request: %v", err)
			}
			body2, err := readFrame(&buf)
			if err != nil {
				t.Fatal(err)
			}
			req2, err := decodeRequest(body2)
			if err != nil || req2.Command != req.Command || req2.ID != req.ID || !bytes.Equal(req2.Stdin, req.Stdin) || len(req2.Argv) != len(req.Argv) {
				t.Fatalf("round trip changed the request: %+v -> %+v (%v)", req, req2, err)
			}
		}
	})
}

// FuzzParseArgv: the argument parser never panics, and every command line
// it accepts decodes into the command's argument type, with nothing
// unknown.
func FuzzParseArgv(f *testing.F) {
	f.Add("typed\x003\x00a\x00--ratio\x000.5\x00--Meta\x00{}", "")
	f.Add("echo-args\x00--first\x00one\x00--flag\x00--\x00-h", "in")
	f.Add("echo-args\x00--stdin-arg=piped", "piped text")
	f.Add("upper", "\xff")
	f.Add("blob\x00--blob=x", "\x00\x01")
	r := testRouter(f)
	f.Fuzz(func(t *testing.T, line, stdin string) {
		words := strings.Split(line, "\x00")
		c := r.lookup(words[0])
		if c == nil || c.name == "panics" {
			return
		}
		var in []byte
		if stdin != "" {
			in = []byte(stdin)
		}
		raw, err := c.parseArgv(words[1:], in)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code != CodeUsage {
				t.Fatalf("parseArgv(%q) failed with %v, want a usage error", words, err)
			}
			return
		}
		if _, err := c.serve(context.Background(), raw, Call{}); err != nil {
			if e, ok := err.(*Error); ok && e.Code == CodeUsage {
				t.Fatalf("parseArgv(%q) = %s, which the command does not decode: %v", words, raw, err)
			}
		}
	})
}

// FuzzValidName: the hand-written name check is the grammar
// [A-Za-z][A-Za-z0-9_-]{0,63}.
func FuzzValidName(f *testing.F) {
	grammar := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)
	for _, s := range []string{"", "a", "web_search", "echo-args", "1st", "-a", "a/b", "a b", "é", strings.Repeat("a", 64), strings.Repeat("a", 65), "a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validName(s), grammar.MatchString(s); got != want {
			t.Fatalf("validName(%q) = %v, want %v", s, got, want)
		}
	})
}
