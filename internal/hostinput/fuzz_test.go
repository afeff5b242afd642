package hostinput

import (
	"bytes"
	"testing"
)

// FuzzParseTrust: the parser never panics, and what it accepts formats
// back to what it parses again the same.
func FuzzParseTrust(f *testing.F) {
	sum := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	f.Add([]byte(trustHeader + "\n"))
	f.Add([]byte(trustHeader + "\n" + sum + " \"/home/u/moat.toml\"\n"))
	f.Add([]byte(trustHeader + "\n" + sum + " \"/a\\nb\"\n"))
	f.Add([]byte("moat-trust 2\n"))
	f.Add([]byte(trustHeader + "\n" + sum + " /x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pins, err := ParseTrust(data)
		if err != nil {
			return
		}
		again, err := ParseTrust(FormatTrust(append([]Pin(nil), pins...)))
		if err != nil {
			t.Fatalf("formatted store does not parse: %v", err)
		}
		if len(again) != len(pins) {
			t.Fatalf("%d pins became %d", len(pins), len(again))
		}
		if !bytes.Equal(FormatTrust(again), FormatTrust(pins)) {
			t.Fatal("format is not stable")
		}
	})
}
