package hostview

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// listings answers "does dir/name exist, and what type is it, without
// following a final link" from one read of dir, where an lstat per name
// cost a system call each: deciding a view asks that of a few hundred
// protected and toolchain names, nearly all in a handful of directories
// (the homes, ~/.config, ~/.cache, ~/.local/share), on every start of a
// sandbox. A listing is made once per directory and kept for the one
// decision that made it, never across calls, so it is as fresh as the
// lstats were. The zero value is not usable; use make.
type listings map[string]map[string]fs.FileMode

// maxListing is the most entries read from one directory. A larger one,
// one that cannot be listed (search permission without read, as a home of
// mode 0711 gives), or one on a file system that may fold case (where
// lstat finds ".SSH" for ".ssh" and a listing does not; see exactNames)
// is answered by lstat, as before.
const maxListing = 4096

// lookup reports the type of dir/name, not following a final link, and
// whether it exists. It answers what os.Lstat would.
func (l listings) lookup(dir, name string) (fs.FileMode, bool) {
	m, ok := l[dir]
	if name == "." || name == ".." || name == "" || strings.ContainsRune(name, '/') {
		m, ok = nil, true // not an entry of dir's listing
	}
	if !ok {
		m = readListing(dir)
		l[dir] = m
	}
	if m == nil {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrPermission) {
			// dir cannot be searched (or a directory above it): no name
			// in it can be looked up, so none is asked again.
			l[dir] = map[string]fs.FileMode{}
		}
		if err != nil {
			return 0, false
		}
		return fi.Mode().Type(), true
	}
	t, ok := m[name]
	return t, ok
}

// lookupPath is lookup of p's directory and base name.
func (l listings) lookupPath(p string) (fs.FileMode, bool) {
	return l.lookup(filepath.Dir(p), filepath.Base(p))
}

// readListing returns dir's entries' types by name, or nil when dir
// cannot be listed whole.
func readListing(dir string) map[string]fs.FileMode {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	if !exactNames(f) { // listing_linux.go
		return nil
	}
	// With a count, ReadDir stops at the end of the directory (io.EOF
	// when nothing was left) or after the count; any other error leaves
	// the listing incomplete.
	entries, err := f.ReadDir(maxListing + 1)
	if err != nil && err != io.EOF || len(entries) > maxListing {
		return nil
	}
	// Reading a directory needs its read permission, looking a name up in
	// it its search permission: with read alone, every lstat there fails,
	// and so every name counts as absent.
	if _, err := os.Lstat(dir + "/."); err != nil { // not Join, which cleans the dot away
		if errors.Is(err, fs.ErrPermission) {
			return map[string]fs.FileMode{}
		}
		return nil
	}
	m := make(map[string]fs.FileMode, len(entries))
	for _, e := range entries {
		m[e.Name()] = e.Type()
	}
	return m
}
