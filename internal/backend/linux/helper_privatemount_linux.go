package linux

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
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

// privateTree makes mount points inside the private temporary directories
// of the new root while it is built. It keeps the directories it walked
// open, so each path is walked once, and it makes a file mount point as a
// hard link to one it made before on the same file system: a link costs no
// inode, where creating and, at Close, deleting one per shown shared-temp
// file made ext4's inode allocator the largest cost of a start.
type privateTree struct {
	root  string
	dirs  map[string]int // O_PATH descriptors of walked directories, by path
	seed  map[uint64]int // O_PATH descriptor of a made mount-point file, by mount id
	mount map[int]uint64 // the mount id of each directory in dirs, by descriptor
}

func newPrivateTree(root string) *privateTree {
	return &privateTree{root: root, dirs: map[string]int{}, seed: map[uint64]int{}, mount: map[int]uint64{}}
}

func (t *privateTree) close() {
	for _, fd := range t.dirs {
		unix.Close(fd)
	}
	for _, fd := range t.seed {
		unix.Close(fd)
	}
}

// sealParents makes read-only the directories that the tree made inside a
// private temporary directory only to hold deeper mount points: for a
// bind at /tmp/a/b/c (a grant, the private home under the state
// directory, a program run from /tmp/go-build*/, the IPC shims), /tmp/a.
// The sandbox writes the private /tmp, so it could otherwise rename /tmp/a
// away, mount point and all, and put a link or a directory of its own in
// its place: the path would then lead where it chose, and a program run
// by that path (an IPC shim's exec of the host binary) would be its own.
// A mount point cannot be renamed, and nothing in a read-only directory
// can be. The copy made read-only holds the binds beneath it, which keep
// their own flags.
func (t *privateTree) sealParents(binds []bind) error {
	roots := map[string]bool{} // the private temporary directories themselves
	for _, b := range binds {
		if b.src != "" && !b.inPrivate {
			roots[b.path] = true
		}
	}
	bound := map[string]bool{}
	for _, b := range binds {
		bound[b.path] = true
	}
	seal := map[string]bool{}
	for _, b := range binds {
		if !b.inPrivate {
			continue
		}
		for r := range roots {
			rest, ok := strings.CutPrefix(b.path, r+"/")
			if !ok {
				continue
			}
			first, _, deeper := strings.Cut(rest, "/")
			if top := r + "/" + first; deeper && !bound[top] {
				seal[top] = true
			}
		}
	}
	dirs := make([]string, 0, len(seal))
	for d := range seal {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		fd, err := t.dir(d)
		if err != nil {
			return fmt.Errorf("seal %q: %w", d, err)
		}
		const flags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
		err = attachCloneTop(fd, flags, fd) // helper_attach_linux.go
		if errors.Is(err, errOldKernel) {
			if err = bindFD(fd, fdPath(fd), unix.MS_REC); err == nil {
				var top int
				if top, err = openNoFollow(t.root, d, true); err == nil {
					err = remount(fdPath(top), flags)
					unix.Close(top)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("seal %q: %w", d, err)
		}
	}
	return nil
}

// placePrivateBind binds b inside a private temporary directory of the new
// root.
func (t *privateTree) placePrivateBind(b bind) error {
	mp, err := t.mountPoint(b.path, b.dir)
	if err != nil {
		if b.optional {
			return nil // the sandbox's own directory is in the way: left out
		}
		return err
	}
	defer unix.Close(mp)
	rec := !isUnder(stagingRoot, b.path) // see placeBind
	flags := bindFlags(b.kind)
	if b.noExec {
		flags |= unix.MS_NOEXEC | unix.MS_NODEV
	}
	err = attachClone(b.fd, rec, flags, mp) // helper_attach_linux.go
	if errors.Is(err, errOldKernel) {
		return t.placeClassic(b, mp, rec, flags)
	}
	if err != nil {
		if b.optional && errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("bind onto %q: %w", b.path, err)
	}
	return nil
}

// placeClassic binds with mount(2) and then remounts, for kernels before
// mount_setattr.
func (t *privateTree) placeClassic(b bind, mp int, rec bool, flags uintptr) error {
	var recFlag uintptr
	if rec {
		recFlag = unix.MS_REC
	}
	if err := bindFD(b.fd, fdPath(mp), recFlag); err != nil {
		if b.optional && errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("bind onto %q: %w", b.path, err)
	}
	// The mount's own root now lies at the path: remount it, by descriptor.
	top, err := openNoFollow(t.root, b.path, b.dir)
	if err != nil {
		return fmt.Errorf("mount point %q: %w", b.path, err)
	}
	defer unix.Close(top)
	return remount(fdPath(top), flags)
}

func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// mountPoint makes sure a directory (or, when !dir, a regular file) exists
// at root+path, creating what is missing and removing what is in the way,
// without following any link, and returns it open with O_PATH.
func (t *privateTree) mountPoint(path string, dir bool) (int, error) {
	parent, name := filepath.Dir(path), filepath.Base(path)
	pfd, err := t.dir(parent)
	if err != nil {
		return -1, fmt.Errorf("mount point %q: %w", path, err)
	}
	fd, err := t.child(pfd, name, dir)
	if err != nil {
		return -1, fmt.Errorf("mount point %q: %w", path, err)
	}
	return fd, nil
}

// dir returns the directory root+path, made if missing, walked without
// following links and kept open.
func (t *privateTree) dir(path string) (int, error) {
	if fd, ok := t.dirs[path]; ok {
		return fd, nil
	}
	var parent int
	if path == "/" {
		fd, err := unix.Open(t.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return -1, err
		}
		t.dirs[path] = fd
		return fd, nil
	}
	parent, err := t.dir(filepath.Dir(path))
	if err != nil {
		return -1, err
	}
	fd, err := t.child(parent, filepath.Base(path), true)
	if err != nil {
		return -1, err
	}
	t.dirs[path] = fd
	return fd, nil
}

// child opens name in parent, as mountPointChild does, making a missing
// file as a link to this file system's seed: the first file mount point
// made here, which is nobody's file but moat's.
func (t *privateTree) child(parent int, name string, dir bool) (int, error) {
	if dir {
		return mountPointChild(parent, name, true)
	}
	seed, ok := t.seedFor(parent)
	if ok && unix.Linkat(unix.AT_FDCWD, fdPath(seed), parent, name, unix.AT_SYMLINK_FOLLOW) == nil {
		return unix.Openat(parent, name, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	}
	if !ok {
		nfd, err := unix.Openat(parent, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
		if err == nil {
			unix.Close(nfd)
			fd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
			if err != nil {
				return -1, err
			}
			if mnt, ok := mountID(fd); ok {
				if dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0); err == nil {
					t.seed[mnt] = dup
				}
			}
			return fd, nil
		}
	}
	// The name is taken (by what the sandbox left, or an earlier mount
	// point), or links are refused here: the long way.
	return mountPointChild(parent, name, false)
}

// seedFor returns the seed on parent's mount (a link across mounts
// fails, even on one file system).
func (t *privateTree) seedFor(parent int) (int, bool) {
	if len(t.seed) == 0 {
		return -1, false
	}
	mnt, ok := t.mount[parent]
	if !ok {
		if mnt, ok = mountID(parent); !ok {
			return -1, false
		}
		t.mount[parent] = mnt
	}
	fd, ok := t.seed[mnt]
	return fd, ok
}

// mountID returns the id of the mount that holds fd.
func mountID(fd int) (uint64, bool) {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &stx); err != nil || stx.Mask&unix.STATX_MNT_ID == 0 {
		return 0, false
	}
	return stx.Mnt_id, true
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
