package moat

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/paths"
)

// Access is what a sandbox may do with a granted path. WRITE and EXEC each
// include READ. The zero value grants nothing and is invalid in a [Grant].
type Access uint8

const (
	// READ allows reading files and listing directories.
	READ Access = 1 << iota
	// WRITE allows creating, changing and removing files. It implies READ
	// and, alone, never allows executing what is written.
	WRITE
	// EXEC allows executing files. It implies READ. WRITE|EXEC on one path
	// is the only way to give up write-xor-execute for that path.
	EXEC
)

// normalize adds the READ that WRITE and EXEC imply.
func (a Access) normalize() Access {
	if a&(WRITE|EXEC) != 0 {
		a |= READ
	}
	return a
}

// CanWrite reports whether a allows writing.
func (a Access) CanWrite() bool { return a&WRITE != 0 }

// CanExec reports whether a allows executing.
func (a Access) CanExec() bool { return a&EXEC != 0 }

// String prints "r", "rw", "rx" or "rwx"; the zero value prints "-".
func (a Access) String() string {
	a = a.normalize()
	if a == 0 {
		return "-"
	}
	var b strings.Builder
	b.WriteByte('r')
	if a.CanWrite() {
		b.WriteByte('w')
	}
	if a.CanExec() {
		b.WriteByte('x')
	}
	return b.String()
}

// Grant gives the sandbox Access to Path and, for a directory, to everything
// beneath it. The zero value is invalid.
type Grant struct {
	// Path is absolute and clean.
	Path string
	// Access is what the sandbox may do there.
	Access Access
}

// UnmarshalText parses a mode written as r, rw, rx or rwx into a. The
// letters may come in any order ("xr" is rx), each at most once, and r is
// required, since no platform can make a path writable or executable but
// unreadable. On an error a is left as it was.
func (a *Access) UnmarshalText(text []byte) error {
	v, err := parseAccess(string(text))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// parseAccess is UnmarshalText's parser.
func parseAccess(s string) (Access, error) {
	if s == "" {
		return 0, errorf("access %q: empty; want r, rw, rx or rwx", s)
	}
	var a Access
	for _, c := range s {
		var bit Access
		switch c {
		case 'r':
			bit = READ
		case 'w':
			bit = WRITE
		case 'x':
			bit = EXEC
		default:
			return 0, errorf("access %q: unknown letter %q; want r, rw, rx or rwx", s, c)
		}
		if a&bit != 0 {
			return 0, errorf("access %q: letter %q given twice", s, c)
		}
		a |= bit
	}
	if a&READ == 0 {
		return 0, errorf("access %q: missing r; write it as %s", s, (a | READ).String())
	}
	return a, nil
}

// ResolvedPath is a path that is absolute, spelled without "." or ".."
// components, and already resolved: no component is a symbolic link. The
// zero value is invalid.
type ResolvedPath struct{ p string }

// NewResolvedPath checks p and returns it as a ResolvedPath.
func NewResolvedPath(p string) (ResolvedPath, error) {
	if !filepath.IsAbs(p) {
		return ResolvedPath{}, errorf("path %q: not absolute", p)
	}
	if filepath.Clean(p) != p || strings.Contains(p, "/./") || strings.Contains(p, "/../") {
		return ResolvedPath{}, errorf("path %q: not clean (no ., .. or repeated /)", p)
	}
	if err := checkNoLinks(p); err != nil {
		return ResolvedPath{}, err
	}
	return ResolvedPath{p: p}, nil
}

// String returns the path.
func (r ResolvedPath) String() string { return r.p }

// checkNoLinks looks at every component of p without following links and
// fails with ErrGrantRedirected at the first one that is a link.
func checkNoLinks(p string) error {
	cur := "/"
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return pathError(p, paths.Bare(err))
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return redirected(p, cur)
		}
	}
	return nil
}

// redirected is the refusal of grant path p, on whose way link is a
// symbolic link; link is p itself when p is the link.
func redirected(p, link string) *PlaceError {
	problem := "is a symbolic link"
	if link != p {
		problem = quote(link) + " is a symbolic link"
	}
	return &PlaceError{Subject: "grant", Path: p, Problem: problem, redirected: true}
}

// pathError is the refusal of path p, which cannot be resolved because of
// err.
func pathError(p string, err error) *PlaceError {
	return &PlaceError{Subject: "path", Path: p, Problem: err.Error(), Err: err}
}

func quote(s string) string { return `"` + s + `"` }
