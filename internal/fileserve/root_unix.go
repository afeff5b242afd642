//go:build linux || darwin

package fileserve

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// rootOpen opens dir beneath the place through its os.Root, and returns a
// descriptor of its own.
func (pl *place) rootOpen(dir string) (int, error) {
	f, err := pl.root.Open(dir)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return -1, errno
		}
		return -1, unix.EXDEV // os.Root's "path escapes from parent"
	}
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	cerr := sc.Control(func(raw uintptr) { fd, err = unix.Dup(int(raw)) })
	if cerr != nil {
		return -1, cerr
	}
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		return -1, unix.ENOTDIR
	}
	unix.CloseOnExec(fd)
	return fd, nil
}
