package hostiletree

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// chmodDirNoFollow makes the directory name in dfd 0700 without following
// a link: it is pinned with O_PATH|O_NOFOLLOW|O_DIRECTORY and changed
// through its /proc/self/fd entry.
func chmodDirNoFollow(dfd int, name string) error {
	fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), 0o700)
}
