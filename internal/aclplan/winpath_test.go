package aclplan

import (
	"errors"
	"testing"
)

func TestCanonical(t *testing.T) {
	cases := []struct {
		in, want string // want "" means refused
	}{
		{`C:\Users\dev`, `C:\Users\dev`},
		{`c:\Users\dev`, `C:\Users\dev`},
		{`C:\`, `C:\`},
		{`\\?\C:\a\b`, `C:\a\b`},
		{`\\?\UNC\srv\share\a`, `\\srv\share\a`},
		{`\\srv\share`, `\\srv\share`},
		{`\\srv\share\a b\c.txt`, `\\srv\share\a b\c.txt`},
		{`C:\a\b\`, ""},
		{`C:\a\\b`, ""},
		{`C:a`, ""},
		{`\a`, ""},
		{`\\srv`, ""},
		{`\\srv\`, ""},
		{`\\srv\share\`, ""},
		{`C:\a\.`, ""},
		{`C:\a\..`, ""},
		{`C:\a\b.`, ""},
		{`C:\a\b `, ""},
		{`C:\a\b::$DATA`, ""},
		{`C:\a\*`, ""},
		{`C:\a\con`, ""},
		{`C:\a\Com1.log`, ""},
		{`C:\a\console`, `C:\a\console`},
		{"C:\\a\\b\x01", ""},
		{"C:\\\xff", ""},
		{`\\.\pipe\x`, ""},
		{``, ""},
	}
	for _, c := range cases {
		got, err := Canonical(c.in)
		if c.want == "" {
			if err == nil || !errors.Is(err, ErrPath) {
				t.Errorf("Canonical(%q) = %q, %v; want refused", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestUnderParentRoot(t *testing.T) {
	cases := []struct {
		p, root string
		under   bool
	}{
		{`C:\a\b`, `C:\a`, true},
		{`C:\A\B`, `c:\a`, true},
		{`C:\a`, `C:\a`, true},
		{`C:\ab`, `C:\a`, false},
		{`C:\a`, `C:\`, true},
		{`D:\a`, `C:\`, false},
		{`\\srv\share\x`, `\\SRV\Share`, true},
		{`\\srv\share2`, `\\srv\share`, false},
	}
	for _, c := range cases {
		if got := Under(c.p, c.root); got != c.under {
			t.Errorf("Under(%q, %q) = %v", c.p, c.root, got)
		}
	}
	parents := map[string]string{`C:\a\b`: `C:\a`, `C:\a`: `C:\`, `C:\`: `C:\`, `\\s\h\x`: `\\s\h`, `\\s\h`: `\\s\h`}
	for p, want := range parents {
		if got := Parent(p); got != want {
			t.Errorf("Parent(%q) = %q, want %q", p, got, want)
		}
	}
	if Extended(`C:\a`) != `\\?\C:\a` || Extended(`\\s\h\x`) != `\\?\UNC\s\h\x` {
		t.Error("Extended")
	}
}

// FuzzCanonical: a canonical path is its own canonical form, its
// extended form canonicalises back to it, and walking Parent reaches a
// volume root under which it lies.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`C:\a\b`, `\\s\h\x`, `\\?\UNC\s\h`, `C:\`, `c:\a b\c.d`, `C:\a\..\b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Canonical(s)
		if err != nil {
			return
		}
		if c2, err := Canonical(c); err != nil || c2 != c {
			t.Fatalf("Canonical(%q) = %q, then %q, %v", s, c, c2, err)
		}
		if c3, err := Canonical(Extended(c)); err != nil || c3 != c {
			t.Fatalf("extended %q: %q, %v", Extended(c), c3, err)
		}
		p := c
		for i := 0; !IsVolumeRoot(p); i++ {
			if i > len(c) {
				t.Fatalf("Parent of %q does not reach a root", c)
			}
			q := Parent(p)
			if !Under(p, q) || Key(q) == Key(p) {
				t.Fatalf("Parent(%q) = %q", p, q)
			}
			p = q
		}
		if !Under(c, p) {
			t.Fatalf("%q not under its root %q", c, p)
		}
	})
}
