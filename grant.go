package moat

import (
	"errors"
	"github.com/moat-sandbox/moat/internal/hostinput"
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

// PathRequest is a path as a user wrote it (relative to the current
// directory, possibly through symbolic links), with the access asked for.
// The zero value is invalid.
type PathRequest struct {
	Path   string
	Access Access
}

// ResolvePaths resolves, once, where they enter, the paths a user wrote: a
// working directory (empty means none) and the grants asked for. It follows
// the links of the user's own spelling, such as /tmp or a symlinked home,
// with two exceptions that it refuses with [ErrGrantRedirected]: a link
// inside a directory the configuration makes writable (the working
// directory, or a WRITE grant), because a sandbox of an earlier run may have
// planted it; and a writable path that is itself a link. "Inside" is decided
// by file identity, so no spelling of the writable directory hides a link.
// Grants of the same path are not merged here; Config does that.
func ResolvePaths(workDir string, reqs []PathRequest) (string, []Grant, error) {
	// The writable places, first resolved as spelled, give the identities
	// that every path is then checked against.
	var writable []string
	if workDir != "" {
		writable = append(writable, workDir)
	}
	for _, r := range reqs {
		if r.Access.CanWrite() {
			writable = append(writable, r.Path)
		}
	}
	var ids []os.FileInfo
	for _, p := range writable {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", nil, pathError(p, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return "", nil, pathError(p, paths.Bare(err))
		}
		fi, err := os.Stat(real)
		if err != nil {
			return "", nil, pathError(p, paths.Bare(err))
		}
		ids = append(ids, fi)
	}
	// A place that a sandbox of an earlier run could write (moat's record
	// of them) may hold a link it planted to lead a later path flag to a
	// protected or private path: a link there is refused too.
	past, err := pastPlaces()
	if err != nil {
		return "", nil, err
	}
	resolve := func(p string, mustNotBeLink bool) (string, error) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", pathError(p, err)
		}
		if mustNotBeLink {
			if fi, err := os.Lstat(abs); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				return "", redirected(p, abs)
			}
		}
		return resolveAvoiding(abs, p, ids, past)
	}
	var wd string
	if workDir != "" {
		var err error
		if wd, err = resolve(workDir, true); err != nil {
			return "", nil, err
		}
	}
	grants := make([]Grant, 0, len(reqs))
	for _, r := range reqs {
		if r.Access == 0 {
			return "", nil, &PlaceError{Subject: "grant", Path: r.Path, Problem: "no access"}
		}
		real, err := resolve(r.Path, r.Access.CanWrite())
		if err != nil {
			return "", nil, err
		}
		grants = append(grants, Grant{Path: real, Access: r.Access})
	}
	return wd, grants, nil
}

// resolveAvoiding resolves abs component by component, following links
// except one found in a directory that is, or lies inside, one of the
// writable directories in ids, or a place in past.
func resolveAvoiding(abs, spelled string, ids, past []os.FileInfo) (string, error) {
	real, err := walkLinks(abs, func(dir, link string) error {
		if insideWritable(dir, ids) {
			return redirected(spelled, link)
		}
		if insideWritable(dir, past) {
			e := redirected(spelled, link)
			e.Problem += " in a place a sandbox of an earlier run could write, which may have planted it; name its target directly"
			return e
		}
		return nil
	})
	var pe *PlaceError
	switch {
	case errors.As(err, &pe):
		return "", pe
	case errors.Is(err, errTooManyLinks):
		return "", &PlaceError{Subject: "path", Path: spelled, Problem: "too many symbolic links"}
	case err != nil:
		return "", pathError(spelled, paths.Bare(err))
	}
	return real, nil
}

// errTooManyLinks ends a walk that followed more than 40 links.
var errTooManyLinks = errors.New("too many symbolic links")

// walkLinks resolves abs component by component, following each link
// after atLink(dir, link), which may refuse it with an error that ends the
// walk. A component that cannot be read ends it with that error.
func walkLinks(abs string, atLink func(dir, link string) error) (string, error) {
	rest := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	cur := "/"
	for hops := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if err := atLink(cur, next); err != nil {
			return "", err
		}
		if hops++; hops > 40 {
			return "", errTooManyLinks
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return cur, nil
}

// insideWritable reports whether dir, or a directory above it, is one of
// the writable directories, by identity.
func insideWritable(dir string, ids []os.FileInfo) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			for _, w := range ids {
				if os.SameFile(fi, w) {
					return true
				}
			}
		}
		if d == "/" {
			return false
		}
	}
}

// pastPlaces are the identities of the places sandboxes of earlier runs
// could write (internal/hostinput's record, in moat's state directory);
// none when there is no state directory, which no run could have used.
// A record that cannot be read is an error: it fails closed.
func pastPlaces() ([]os.FileInfo, error) {
	state, err := moatStateRoot()
	if err != nil {
		return nil, nil
	}
	places, err := hostinput.Store{Dir: state}.Places()
	if err != nil {
		return nil, errorf("%w", err)
	}
	var out []os.FileInfo
	for _, p := range places {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, fi)
		}
	}
	return out, nil
}

// plantedLink returns the first link on the way to p, as it resolves now,
// that lies in one of the places in past ("" for none): one a sandbox of an
// earlier run could have planted. A part of p that does not exist yet ends
// the walk; what opening p creates there holds no link.
func plantedLink(p string, past []os.FileInfo) string {
	abs, err := filepath.Abs(p)
	if err != nil || len(past) == 0 {
		return ""
	}
	var found string
	walkLinks(abs, func(dir, link string) error {
		if insideWritable(dir, past) {
			found = link
			return errTooManyLinks // any error ends the walk
		}
		return nil
	})
	return found
}
