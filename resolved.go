package moat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/paths"
)

// ErrGrantRedirected is matched by [errors.Is] when a granted path, or a
// directory on the way to it, has become a symbolic link, or is no longer
// the object that was checked, so honouring the grant would follow the link
// somewhere else.
var ErrGrantRedirected = errors.New("moat: grant redirected")

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
			return errorf("path %q: %v", p, paths.Bare(err))
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return &redirectedError{path: p, link: cur}
		}
	}
	return nil
}

// redirectedError names the grant and the link found on its way.
type redirectedError struct {
	path, link string
}

func (e *redirectedError) Error() string {
	if e.link == e.path {
		return "moat: grant " + quote(e.path) + ": is a symbolic link"
	}
	return "moat: grant " + quote(e.path) + ": " + quote(e.link) + " is a symbolic link"
}

func (e *redirectedError) Is(target error) bool { return target == ErrGrantRedirected }

func quote(s string) string { return `"` + s + `"` }

// Readable grants READ on p and returns c, for chaining.
func (c *Config) Readable(p ResolvedPath) *Config { return c.Grant(p, READ) }

// Writable grants WRITE (read and write, never execute) on p.
func (c *Config) Writable(p ResolvedPath) *Config { return c.Grant(p, WRITE) }

// Executable grants EXEC (read and execute) on p.
func (c *Config) Executable(p ResolvedPath) *Config { return c.Grant(p, EXEC) }

// Grant gives access a on p; a path granted twice keeps the union. WRITE|EXEC
// is the only way to give up write-xor-execute for p.
func (c *Config) Grant(p ResolvedPath, a Access) *Config {
	c.Grants = append(c.Grants, Grant{Path: p.p, Access: a})
	return c
}
