package linux

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The sandbox's /tmp and /var/tmp are host directories of its own
// (helperSpec.PrivateTmp), which it writes and which outlive a zygote. Binds
// that land inside them (the working directory and home when they lie under
// /tmp, the host's shared-temp files, grants there) need mount points made
// in the sandbox's own files, so the mount point is walked one component at
// a time without following links, and whatever the sandbox left in the way
// (a link, a file where a directory belongs) is removed first: otherwise a
// link left there could move the mount, or make the zygote create a
// directory outside the sandbox, while the host's root is still its root.

// privateSource returns, for the bind at path p, the host directory bound
// there when it is a private temporary directory, and whether p lies inside
// one.
func privateSource(s *helperSpec, p string) (src string, inside bool) {
	if alt, ok := s.PrivateTmp[p]; ok {
		return alt, false
	}
	for dir := range s.PrivateTmp {
		if isStrictlyUnder(p, dir) {
			return "", true
		}
	}
	return "", false
}

// placePrivateBind binds b inside a private temporary directory of the new
// root at root.
func placePrivateBind(root string, b bind) error {
	mp, err := privateMountPoint(root, b.path, b.dir)
	if err != nil {
		if b.optional {
			return nil // the sandbox's own directory is in the way: left out
		}
		return err
	}
	rec := uintptr(unix.MS_REC)
	if isUnder(stagingRoot, b.path) {
		rec = 0 // see placeBind
	}
	err = bindFD(b.fd, fdPath(mp), rec)
	unix.Close(mp)
	if err != nil {
		if b.optional && errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("bind onto %q: %w", b.path, err)
	}
	// The mount's own root now lies at the path: remount it, by descriptor.
	top, err := openNoFollow(root, b.path, b.dir)
	if err != nil {
		return fmt.Errorf("mount point %q: %w", b.path, err)
	}
	defer unix.Close(top)
	flags := bindFlags(b.kind)
	if b.noExec {
		flags |= unix.MS_NOEXEC | unix.MS_NODEV
	}
	return remount(fdPath(top), flags)
}

func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// privateMountPoint makes sure a directory (or, when !dir, a regular file)
// exists at root+path, creating what is missing and removing what is in
// the way, without following any link, and returns it open with O_PATH.
func privateMountPoint(root, path string, dir bool) (int, error) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, err
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, name := range parts {
		next, err := mountPointChild(fd, name, i < len(parts)-1 || dir)
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("mount point %q: %w", path, err)
		}
		fd = next
	}
	return fd, nil
}

// mountPointChild opens name in the directory parent as a directory (dir)
// or a regular file, creating it if missing and removing a link, or a file
// where a directory belongs, first.
func mountPointChild(parent int, name string, dir bool) (int, error) {
	flags := unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW
	if dir {
		flags |= unix.O_DIRECTORY
	}
	for range 4 {
		fd, err := unix.Openat(parent, name, flags, 0)
		if err == nil {
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				unix.Close(fd)
				return -1, err
			}
			if dir || st.Mode&unix.S_IFMT == unix.S_IFREG {
				return fd, nil
			}
			unix.Close(fd)
			err = unix.ENOTDIR // a link or a special file where a file belongs
		}
		switch {
		case errors.Is(err, unix.ENOENT):
			if dir {
				err = unix.Mkdirat(parent, name, 0o755)
			} else {
				var nfd int
				nfd, err = unix.Openat(parent, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
				if err == nil {
					unix.Close(nfd)
				}
			}
			if err != nil && !errors.Is(err, unix.EEXIST) {
				return -1, err
			}
		case errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP):
			// What the sandbox left where the mount point belongs. A
			// directory where a file belongs is not removed (it may hold
			// the sandbox's work): that bind is left out or fails.
			if err := unix.Unlinkat(parent, name, 0); err != nil {
				return -1, fmt.Errorf("%q is in the way: %w", name, err)
			}
		default:
			return -1, err
		}
	}
	return -1, fmt.Errorf("%q keeps changing", name)
}

// openNoFollow opens root+path with O_PATH, following no link.
func openNoFollow(root, path string, dir bool) (int, error) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, err
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, name := range parts {
		flags := unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW
		if i < len(parts)-1 || dir {
			flags |= unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, name, flags, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}
