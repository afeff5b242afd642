package moat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostinput"
	"github.com/moat-sandbox/moat/internal/paths"
)

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
