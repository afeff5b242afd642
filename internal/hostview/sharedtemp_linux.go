//go:build linux

package hostview

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// dirAt stats a directory's entries relative to the directory: one call
// per entry with a one-component name, where os.DirEntry.Info walks the
// whole path again. Shared temp can hold thousands of entries, and each
// start lists them.
type dirAt struct{ fd int }

func openDir(dir string) dirAt {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return dirAt{fd: -1}
	}
	return dirAt{fd: fd}
}

// lstat returns e's mode and modification time (in nanoseconds), without
// following a link.
func (d dirAt) lstat(e os.DirEntry) (fs.FileMode, int64, bool) {
	if d.fd < 0 {
		return statEntry(e)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, 0, false
	}
	mode := fs.FileMode(st.Mode & 0o777)
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		mode |= fs.ModeIrregular // anything but a regular file; only that matters here
	}
	return mode, st.Mtim.Nano(), true
}

func (d dirAt) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}
