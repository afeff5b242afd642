package hostview

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/paths"
)

// A directory in shared temp is never shown on its own account (see
// SharedTempFiles): anyone may have made it, and what it holds may be
// someone else's. One is shown, read-only, only when a variable passed to
// the sandbox names it (GOMODCACHE=/var/tmp/gomod, a cache an
// administrator keeps there), and only when no one but root could have
// put anything in it for the sandbox to find or change: the directory and
// every directory above it up to shared temp belong to root and only root
// may write them, and nothing in it is writable by the sandbox's user or
// is a socket (which a read-only view would still let it connect to) or
// a device, and nothing in it carries an ACL (which may give write access
// that the mode bits do not show).
// The scan is bounded; a larger tree is refused.

// MaxSharedTempDirEntries bounds the scan of a shared-temp directory a
// variable names.
const MaxSharedTempDirEntries = 10000

// adminUID is root's user ID; tests, which cannot make root's
// directories, set their own.
var adminUID = 0

// ErrSharedTempDir is the class of the reasons SharedTempDir refuses a
// directory; the error's text says which.
var ErrSharedTempDir = errors.New("not shown")

// Owner is who the sandbox runs as on the host: its user and groups.
// The zero value is root with no supplementary groups.
type Owner struct {
	UID    int
	Groups []int
}

// UnderSharedTemp returns the shared temporary directory (of dirs) that
// p lies strictly beneath, or "".
func UnderSharedTemp(p string, dirs []string) string {
	for _, d := range dirs {
		if p != d && paths.Under(p, d) {
			return d
		}
	}
	return ""
}

// SharedTempDir checks the directory p, strictly beneath the shared
// temporary directory temp, for showing read-only to a sandbox that runs
// as who: nil when it may be shown, else an error matching
// ErrSharedTempDir that says why not.
func SharedTempDir(p, temp string, who Owner) error {
	refuse := func(format string) error {
		return &tempDirError{path: p, why: format}
	}
	rel, err := filepath.Rel(temp, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return refuse("not inside shared temp")
	}
	cur := temp
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return refuse("cannot be examined: " + err.Error())
		}
		if !fi.IsDir() {
			return refuse(cur + " is not a directory (a link or a file)")
		}
		uid, _, ok := ownerOf(fi)
		if !ok || uid != adminUID || fi.Mode().Perm()&0o022 != 0 {
			return refuse(cur + " is not a directory only root can write")
		}
		if hasACL(cur) {
			return refuse(cur + " has an ACL, which may let others write it")
		}
	}
	n := 0
	var why string
	walkErr := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			why = "cannot be read whole: " + err.Error()
			return fs.SkipAll
		}
		if n++; n > MaxSharedTempDirEntries {
			why = "holds more than the entries moat checks"
			return fs.SkipAll
		}
		if d.Type()&fs.ModeSocket != 0 {
			why = q + " is a socket"
			return fs.SkipAll
		}
		if d.Type()&fs.ModeDevice != 0 {
			why = q + " is a device"
			return fs.SkipAll
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil // what a link writes to is judged where it leads, inside the sandbox's view
		}
		fi, err := d.Info()
		if err != nil {
			why = "cannot be read whole: " + err.Error()
			return fs.SkipAll
		}
		if writableBy(fi, who) {
			why = q + " is writable by the sandbox's user"
			return fs.SkipAll
		}
		if hasACL(q) {
			why = q + " has an ACL, which may let the sandbox's user write it"
			return fs.SkipAll
		}
		return nil
	})
	if walkErr != nil && why == "" {
		why = "cannot be read whole: " + walkErr.Error()
	}
	if why != "" {
		return refuse(why)
	}
	return nil
}

// writableBy reports whether who may write the entry fi describes, or
// make it writable: by its owner, group and mode.
func writableBy(fi fs.FileInfo, who Owner) bool {
	uid, gid, ok := ownerOf(fi)
	if !ok {
		return true // unknown: fail closed
	}
	m := fi.Mode().Perm()
	switch {
	case m&0o002 != 0:
		return true
	case uid == who.UID:
		return true // its owner may chmod it, which Landlock does not stop
	}
	for _, g := range who.Groups {
		if g == gid && m&0o020 != 0 {
			return true
		}
	}
	return false
}

// tempDirError is a shared-temp directory refused, and why.
type tempDirError struct{ path, why string }

func (e *tempDirError) Error() string { return e.path + ": " + e.why }

func (e *tempDirError) Is(target error) bool { return target == ErrSharedTempDir }
