package moat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAccessUnmarshalText(t *testing.T) {
	cases := []struct {
		in   string
		want Access
		err  string
	}{
		{"r", READ, ""},
		{"rw", READ | WRITE, ""},
		{"rx", READ | EXEC, ""},
		{"rwx", READ | WRITE | EXEC, ""},
		{"xr", READ | EXEC, ""},
		{"xwr", READ | WRITE | EXEC, ""},
		{"", 0, "empty"},
		{"RW", 0, "unknown letter"},
		{"rq", 0, "unknown letter"},
		{"rr", 0, "given twice"},
		{"w", 0, "missing r; write it as rw"},
		{"x", 0, "missing r; write it as rx"},
		{"wx", 0, "missing r; write it as rwx"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			var got Access
			err := got.UnmarshalText([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.HasPrefix(err.Error(), "moat: ") {
					t.Fatalf("UnmarshalText(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

// FuzzAccessUnmarshalText: never panics, accepts only modes that print back to an
// equivalent mode, and String parses back to the same Access.
func FuzzAccessUnmarshalText(f *testing.F) {
	for _, s := range []string{"r", "rw", "rx", "rwx", "xr", "", "w", "rr", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var a Access
		err := a.UnmarshalText([]byte(s))
		if err != nil {
			return
		}
		if a&READ == 0 || len(s) > 3 {
			t.Fatalf("UnmarshalText(%q) accepted %v", s, a)
		}
		var b Access
		err = b.UnmarshalText([]byte(a.String()))
		if err != nil || b != a {
			t.Fatalf("round trip of %q: %v -> %q -> %v, %v", s, a, a.String(), b, err)
		}
	})
}

func TestNewResolvedPath(t *testing.T) {
	dir := t.TempDir()
	real, _ := filepath.EvalSymlinks(dir)
	os.Mkdir(filepath.Join(real, "sub"), 0o755)
	os.Symlink(filepath.Join(real, "sub"), filepath.Join(real, "link"))
	cases := []struct {
		name, path string
		err        error
		errText    string
	}{
		{"resolved directory", filepath.Join(real, "sub"), nil, ""},
		{"relative", "sub", nil, "not absolute"},
		{"dot dot", real + "/sub/../sub", nil, "not clean"},
		{"trailing slash", real + "/sub/", nil, "not clean"},
		{"missing", real + "/missing", nil, "no such file"},
		{"link itself", filepath.Join(real, "link"), ErrGrantRedirected, "is a symbolic link"},
		{"link on the way", filepath.Join(real, "link", "x"), ErrGrantRedirected, "is a symbolic link"},
	}
	os.WriteFile(filepath.Join(real, "sub", "x"), nil, 0o644)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewResolvedPath(tc.path)
			if tc.errText == "" {
				if err != nil || p.String() != tc.path {
					t.Fatalf("NewResolvedPath(%q) = %q, %v", tc.path, p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errText) || (tc.err != nil && !errors.Is(err, tc.err)) {
				t.Fatalf("NewResolvedPath(%q) error %v, want %q", tc.path, err, tc.errText)
			}
		})
	}
}

func TestGrantBuildersUnion(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	p, err := NewResolvedPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	cfg.Writable(p).Executable(p).Readable(p)
	norm, err := normalize(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(norm.Grants) != 1 || norm.Grants[0].Access.String() != "rwx" {
		t.Fatalf("grants %+v, want one rwx", norm.Grants)
	}
}

func TestGrantThroughALinkIsRefused(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link"))
	_, err := normalize(Config{Grants: []Grant{{Path: filepath.Join(dir, "link"), Access: READ}}}, nil)
	if !errors.Is(err, ErrGrantRedirected) || !strings.Contains(err.Error(), "link") {
		t.Fatalf("err = %v, want ErrGrantRedirected naming the link", err)
	}
}
