package linux

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Landlock grants a right on a directory for everything beneath it and has
// no way to take it back below. To allow a tree except some paths inside
// it ("readable except protected"), carve replaces the rule on the tree by
// rules on what surrounds each carved path: every directory on the way from
// the tree down to a carved path keeps only the right to list it, and every
// other entry of those directories gets the tree's rights. Entries that do
// not exist when the sandbox is built get no rule, so a protected file
// created afterwards stays out of reach too.

// llRule is one Landlock path-beneath rule before it is installed.
type llRule struct {
	Path   string  `json:"path"`
	Access uint64  `json:"access"`
	ID     *fileID `json:"id,omitempty"` // the object the path must still be
	// Must makes a missing path an error rather than a skipped rule.
	Must bool `json:"must,omitempty"`
	// NoFollow opens the path without following a final symbolic link:
	// set on entries found by enumeration.
	NoFollow bool `json:"nofollow,omitempty"`
}

// carveRule is a path inside allowed trees that keeps only Keep of the
// rights the tree grants: 0 for a protected path, everything but execute
// for shared temporary directories at the permissive level.
type carveRule struct {
	Path string `json:"path"`
	Keep uint64 `json:"keep"`
	// Seal expands the directory at Path like a directory on the way to
	// a carved path: it keeps only listing (of Keep), its entries that
	// exist now get Keep, and entries created later get no rule.
	Seal bool `json:"seal,omitempty"`
}

// ancestorRights are what a directory on the way to a carved path keeps:
// listing it. Writing is withheld because it would reach the carved path.
const ancestorRights = unix.LANDLOCK_ACCESS_FS_READ_DIR

// readDirFunc lists a directory; os.ReadDir in the helper, a fake in tests.
type readDirFunc func(string) ([]fs.DirEntry, error)

// carve expands rules around carved paths. A rule whose path is itself
// carved, or lies inside a carved path, is an explicit grant and is kept
// as it is; only rules strictly above a carved path are expanded.
func carve(rules []llRule, carved []carveRule, readDir readDirFunc) []llRule {
	if len(carved) == 0 {
		return rules
	}
	var out []llRule
	for _, r := range rules {
		var inside []carveRule
		var sealed *carveRule
		for i, c := range carved {
			switch {
			case isStrictlyUnder(c.Path, r.Path):
				inside = append(inside, c)
			case c.Seal && c.Path == r.Path:
				sealed = &carved[i]
			}
		}
		if len(inside) == 0 && sealed == nil {
			out = append(out, r)
			continue
		}
		// The tree's own directory: the listing right only, on the
		// object that was checked.
		top := r
		top.Access &= ancestorRights
		out = append(out, top)
		access := r.Access
		if sealed != nil {
			access &= sealed.Keep
		}
		out = expandDir(out, r.Path, access, inside, readDir)
	}
	return out
}

// expandDir adds rules for the entries of dir, which holds the carved
// paths inside (all strictly under dir).
func expandDir(out []llRule, dir string, access uint64, inside []carveRule, readDir readDirFunc) []llRule {
	entries, err := readDir(dir)
	if err != nil {
		return out // gone or unreadable: nothing beneath it is allowed
	}
	names := make([]string, 0, len(entries))
	kinds := make(map[string]fs.FileMode, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
		kinds[e.Name()] = e.Type()
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(dir, name)
		var below []carveRule
		var self *carveRule
		for i, c := range inside {
			switch {
			case c.Path == p:
				self = &inside[i]
			case isStrictlyUnder(c.Path, p):
				below = append(below, c)
			}
		}
		mode := kinds[name]
		switch {
		case self != nil && self.Seal && mode.IsDir():
			// Sealed: listing, and its present entries (carved below).
			if keep := access & self.Keep; keep != 0 {
				out = append(out, llRule{Path: p, Access: keep & ancestorRights, NoFollow: true})
				out = expandDir(out, p, keep, below, readDir)
			}
		case self != nil && len(below) > 0 && mode.IsDir():
			// Carved itself and holding carved paths: what it keeps,
			// carved again below.
			if keep := access & self.Keep; keep != 0 {
				out = append(out, llRule{Path: p, Access: keep & ancestorRights, NoFollow: true})
				out = expandDir(out, p, keep, below, readDir)
			}
		case self != nil:
			if keep := access & self.Keep; keep != 0 {
				out = append(out, llRule{Path: p, Access: keep, NoFollow: true})
			}
		case len(below) > 0 && mode.IsDir():
			out = append(out, llRule{Path: p, Access: access & ancestorRights, NoFollow: true})
			out = expandDir(out, p, access, below, readDir)
		case mode&fs.ModeSymlink != 0:
			// A link leads elsewhere; what it leads to has rules of its
			// own, or none.
		default:
			out = append(out, llRule{Path: p, Access: access, NoFollow: true})
		}
	}
	return out
}

// isStrictlyUnder reports whether p lies beneath dir (not dir itself).
func isStrictlyUnder(p, dir string) bool {
	if dir == "/" {
		return p != "/" && strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir+"/")
}

// isUnder reports whether p is dir or lies beneath it.
func isUnder(p, dir string) bool { return p == dir || isStrictlyUnder(p, dir) }

// osReadDir is readDirFunc for the real file system.
func osReadDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
