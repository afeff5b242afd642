package fileserve

import (
	"errors"
	"testing"
)

func TestResolve(t *testing.T) {
	places := []string{"/w", "/w/grant", "/g", "/data/x"}
	for _, tc := range []struct {
		path    string
		want    target
		wantErr error
	}{
		{"", target{0, ".", "."}, nil},
		{".", target{0, ".", "."}, nil},
		{"a", target{0, ".", "a"}, nil},
		{"a/b/c", target{0, "a/b", "c"}, nil},
		{"./a//b/", target{0, "a", "b"}, nil},
		{"/w/a", target{0, ".", "a"}, nil},
		{"/w", target{0, ".", "."}, nil},
		{"/w/", target{0, ".", "."}, nil},
		{"/w/grant/f", target{1, ".", "f"}, nil},
		{"grant/f", target{1, ".", "f"}, nil},
		{"/g/sub/f", target{2, "sub", "f"}, nil},
		// ".." is left for the kernel, which refuses it beneath the place.
		{"..", target{0, "..", "."}, nil},
		{"../../etc/passwd", target{0, "../../etc", "passwd"}, nil},
		{"a/../b", target{0, "a/..", "b"}, nil},
		{"a/..", target{0, "a/..", "."}, nil},
		{"/w/../g/f", target{0, "../g", "f"}, nil},
		{"/w/grant/../x", target{1, "..", "x"}, nil},
		// No place before the "..": outside.
		{"/x/../w/a", target{}, errOutside},
		{"/etc/passwd", target{}, errOutside},
		{"/wx/a", target{}, errOutside},
		{"/data", target{}, errOutside},
		{"/data/x/y", target{3, ".", "y"}, nil},
		{"a\x00b", target{}, errBadPath},
		{string(make([]byte, MaxPath+1)), target{}, errBadPath},
	} {
		got, err := resolve(places, "/w", tc.path)
		if !errors.Is(err, tc.wantErr) || (err == nil && got != tc.want) {
			t.Errorf("resolve(%q) = %+v, %v; want %+v, %v", tc.path, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestDisplay(t *testing.T) {
	for _, tc := range []struct {
		place string
		t     target
		want  string
	}{
		{"/w", target{0, ".", "."}, "/w"},
		{"/w", target{0, ".", "a"}, "/w/a"},
		{"/w", target{0, "a/b", "c"}, "/w/a/b/c"},
		{"/w", target{0, "a/..", "b"}, "/w/b"},
		{"/", target{0, ".", "a"}, "/a"},
		{"/", target{0, ".", "."}, "/"},
	} {
		if got := display(tc.place, tc.t); got != tc.want {
			t.Errorf("display(%q, %+v) = %q; want %q", tc.place, tc.t, got, tc.want)
		}
		if got := baseName(tc.want); tc.want != "/" && got == "" {
			t.Errorf("baseName(%q) empty", tc.want)
		}
	}
}
