package fileserve

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openDir opens dir, relative to the place, as a directory, resolving
// every component beneath the place: no ".." or link may leave it, and no
// magic link (/proc/self/fd/N) may be followed. openat2 fails with EAGAIN
// when a rename raced the walk; it is tried again a few times. Where the
// kernel has no openat2 (or seccomp hides it), os.Root walks instead.
func (pl *place) openDir(dir string) (int, error) {
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	for range 16 {
		fd, err := unix.Openat2(pl.fd, dir, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS):
			return pl.rootOpen(dir)
		}
		return -1, err
	}
	return -1, unix.EAGAIN
}

// fdPath asks the kernel where fd lies, as this process sees it.
func fdPath(fd int) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || len(p) == 0 || p[0] != '/' {
		return "", false
	}
	return p, true
}
