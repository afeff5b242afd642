package paths

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

func TestUnder(t *testing.T) {
	for _, tc := range []struct {
		p, dir string
		want   bool
	}{
		{"/a", "/a", true}, {"/a/b", "/a", true}, {"/ab", "/a", false}, {"/a", "/a/b", false},
		{"/x", "/", true}, {"/", "/", true}, {"/a/b/c", "/a/b", true},
		{"/a/b", "/a/c", false}, {"/b", "/a", false}, {"/a/bc", "/a/b", false},
	} {
		if got := Under(tc.p, tc.dir); got != tc.want {
			t.Errorf("Under(%q, %q) = %v, want %v", tc.p, tc.dir, got, tc.want)
		}
	}
}

func TestUnderAny(t *testing.T) {
	for _, tc := range []struct {
		p     string
		roots []string
		want  bool
	}{
		{"/usr/bin/x", []string{"/opt", "/usr"}, true},
		{"/usrx", []string{"/usr"}, false},
		{"/w/x", []string{"/w/"}, true},
		{"/anything", []string{"/"}, true},
		{"/a", nil, false},
	} {
		if got := UnderAny(tc.p, tc.roots); got != tc.want {
			t.Errorf("UnderAny(%q, %q) = %v, want %v", tc.p, tc.roots, got, tc.want)
		}
	}
}

func TestBare(t *testing.T) {
	_, err := os.Stat("/nonexistent-moat-path")
	if b := Bare(err); !errors.Is(b, fs.ErrNotExist) || b.Error() == err.Error() {
		t.Errorf("Bare(%v) = %v", err, b)
	}
	plain := errors.New("x")
	if Bare(plain) != plain {
		t.Error("Bare changed a plain error")
	}
}
