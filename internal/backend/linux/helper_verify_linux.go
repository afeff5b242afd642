package linux

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// fileID is the identity of a checked file: its device and inode.
type fileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// redirectedError says a granted path no longer leads to the object that
// was checked when the sandbox was configured: a component became a
// symbolic link, or the path was swapped for another object.
type redirectedError struct{ path, why string }

func (e *redirectedError) Error() string {
	return fmt.Sprintf("grant %q redirected: %s", e.path, e.why)
}

// openVerified opens path with O_PATH without following any symbolic link
// on the way (openat2 RESOLVE_NO_SYMLINKS, or O_NOFOLLOW on kernels before
// 5.6) and, when want is set, checks that it is still that object.
func openVerified(path string, want *fileID) (int, error) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
	if errors.Is(err, unix.ENOSYS) {
		fd, err = unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	}
	if err != nil {
		if want != nil && errors.Is(err, unix.ELOOP) {
			return -1, &redirectedError{path, "a component is a symbolic link"}
		}
		return -1, err
	}
	if want == nil {
		return fd, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		unix.Close(fd)
		return -1, &redirectedError{path, "it is a symbolic link"}
	case uint64(st.Dev) != want.Dev || st.Ino != want.Ino:
		unix.Close(fd)
		return -1, &redirectedError{path, "it is no longer the file or directory that was checked"}
	}
	return fd, nil
}
