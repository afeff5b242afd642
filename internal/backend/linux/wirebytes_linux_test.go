package linux

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

// Every string survives the wire byte for byte, whatever its bytes.
func TestWireEscapeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "é ✓", "bad\xff", "\xff\xfe", "nul\x00in", "\x00", "\x00ff", "\x00\x00", "a\x00", "\xc3", "x\xc3\xa9\xc3"} {
		e := wireEscape(s)
		if !utf8.ValidString(e) {
			t.Errorf("wireEscape(%q) = %q, not UTF-8", s, e)
		}
		if got := wireUnescape(e); got != s {
			t.Errorf("round trip of %q gave %q (escaped %q)", s, got, e)
		}
	}
	if wireEscape("plain é") != "plain é" {
		t.Error("valid text changed")
	}
}

// FuzzWireEscape: any string comes back unchanged, and the escaped form is
// valid UTF-8, so JSON carries it intact.
func FuzzWireEscape(f *testing.F) {
	for _, s := range []string{"", "a", "bad\xff", "\x00", "\x00zz", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := wireEscape(s)
		if !utf8.ValidString(e) {
			t.Fatalf("wireEscape(%q) = %q, not UTF-8", s, e)
		}
		if got := wireUnescape(e); got != s {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
		_ = wireUnescape(s) // hostile input: never panics
	})
}

// A whole message, helperSpec with its maps and nested structs, crosses the
// socket with its non-UTF-8 names intact.
func TestWireMessageKeepsBytes(t *testing.T) {
	bad := "/w/bad\xff"
	sent := helperSpec{
		WorkDir:  bad,
		ReadOnly: []string{bad + "/r", "/ok"},
		Identity: map[string]fileID{bad: {Dev: 1, Ino: 2}},
		Carve:    []carveRule{{Path: bad + "/c", Keep: 3}},
		Virtual:  []virtualFile{{Path: bad + "/v", Content: []byte{0xff, 0}}},
	}
	orig := sent
	a, b := socketPair(t)
	if err := sendMessage(a, &sent, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sent, orig) {
		t.Fatal("sendMessage changed the caller's message")
	}
	var got helperSpec
	if _, err := recvMessage(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sent) {
		t.Fatalf("received %+v, want %+v", got, sent)
	}
}
