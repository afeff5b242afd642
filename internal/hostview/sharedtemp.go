package hostview

import (
	"cmp"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SharedTempDirs are the host's shared temporary directories.
var SharedTempDirs = []string{"/tmp", "/var/tmp"}

// SharedTempLimit bounds how many of each shared temporary directory's
// files a sandbox sees: a backend shows each one on its own (on Linux a
// bind mount each), which costs time at every start. Past it, the most
// recently changed files are the ones shown: a file someone just wrote for
// the sandbox to read is never the one left out.
const SharedTempLimit = 64

// SharedTempFiles lists the files of dirs (SharedTempDirs outside tests)
// that a sandbox at the default or permissive level may read: regular
// files only, directly in the directory, that anyone may read, and not
// named in skip (the working directory and grants, shown as they are).
//
// Never a directory, however empty: any directory the sandbox can see live
// can grow a Unix socket later (tmux, an SSH or GPG agent, X11), and
// neither a read-only mount nor Landlock stops connect() on one; that also
// leaves out other sandboxes' working directories, whatever their names.
// Never a symbolic link (anyone can plant one, and a rule on it lands on
// what it points to), a socket, a FIFO or a device. Files that only their
// owner may read (Kerberos ticket caches, X authority files, mkstemp's
// files) are left out too: that mode is how a user says "mine". moat's
// own entries (moat-*) stay out. Files created later are not seen.
func SharedTempFiles(dirs, skip []string) []string {
	var out []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		type file struct {
			path  string
			mtime int64
		}
		var files []file
		at := openDir(dir) // sharedtemp_linux.go: stat relative to it
		for _, e := range entries {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), "moat-") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if slices.Contains(skip, p) {
				continue
			}
			mode, mtime, ok := at.lstat(e) // a link never passes
			if !ok || !mode.IsRegular() || mode.Perm()&0o004 == 0 {
				continue
			}
			files = append(files, file{p, mtime})
		}
		at.close()
		if len(files) > SharedTempLimit {
			slices.SortStableFunc(files, func(a, b file) int { return cmp.Compare(b.mtime, a.mtime) })
			files = files[:SharedTempLimit]
		}
		for _, f := range files {
			out = append(out, f.path)
		}
	}
	return out
}

// StillShared keeps the files of list (SharedTempFiles' answer, taken
// earlier) that still pass its test: a regular file, not a link, that
// anyone may read. A backend that configures itself again later (after a
// namespace fallback) shows only those; files created since stay unseen.
func StillShared(list []string) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o004 != 0 {
			out = append(out, p)
		}
	}
	return out
}

// statEntry is e's mode and modification time by os.DirEntry.Info, which
// does not follow a link.
func statEntry(e os.DirEntry) (fs.FileMode, int64, bool) {
	fi, err := e.Info()
	if err != nil {
		return 0, 0, false
	}
	return fi.Mode(), fi.ModTime().UnixNano(), true
}
