package bytestr

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// Every string survives the wire byte for byte, whatever its bytes.
func TestWireEscapeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "é ✓", "bad\xff", "\xff\xfe", "nul\x00in", "\x00", "\x00ff", "\x00\x00", "a\x00", "\xc3", "x\xc3\xa9\xc3"} {
		e := Escape(s)
		if !utf8.ValidString(e) {
			t.Errorf("Escape(%q) = %q, not UTF-8", s, e)
		}
		if got := Unescape(e); got != s {
			t.Errorf("round trip of %q gave %q (escaped %q)", s, got, e)
		}
	}
	if Escape("plain é") != "plain é" {
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
		e := Escape(s)
		if !utf8.ValidString(e) {
			t.Fatalf("Escape(%q) = %q, not UTF-8", s, e)
		}
		if got := Unescape(e); got != s {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
		_ = Unescape(s) // hostile input: never panics
	})
}

// A whole value, with nested structs, maps (keys too), slices, pointers and
// byte slices, comes back byte for byte, and Out leaves the original alone.
func TestOutInKeepsBytes(t *testing.T) {
	type inner struct {
		Path    string
		Content []byte
	}
	type msg struct {
		Dir   string
		List  []string
		IDs   map[string]int
		Items []inner
		Ptr   *inner
		Any   any
		skip  string
	}
	bad := "/w/bad\xff"
	sent := msg{Dir: bad, List: []string{bad, "ok"}, IDs: map[string]int{bad: 1}, Items: []inner{{Path: bad, Content: []byte{0xff}}}, Ptr: &inner{Path: bad}, Any: bad}
	b, err := json.Marshal(Out(&sent))
	if err != nil {
		t.Fatal(err)
	}
	if sent.Dir != bad || sent.Ptr.Path != bad {
		t.Fatal("Out changed the original")
	}
	var got msg
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	In(&got)
	sent.skip = ""
	if !reflect.DeepEqual(got, sent) {
		t.Fatalf("got %+v, want %+v", got, sent)
	}
}

// A value with only valid text is passed through as it is: nothing copied.
func TestOutPassesValidThrough(t *testing.T) {
	type msg struct{ List []string }
	m := &msg{List: []string{"a", "é"}}
	if got := Out(m); got != any(m) {
		t.Error("Out copied a value that needed no escaping")
	}
}
