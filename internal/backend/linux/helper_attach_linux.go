package linux

import (
	"errors"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The mount API of Linux 5.12 (open_tree, mount_setattr, move_mount) binds
// a held descriptor onto a held mount point with its final flags in three
// calls: the clone is detached while its flags are set, so nothing in the
// sandbox's tree ever carries the wrong ones, and no path is looked up
// again. The classic bind, statfs and remount take three calls plus two
// walks of the path, and show the bind writable for a moment.

// newMountAPI is cleared the first time the kernel lacks the calls, so
// later binds go the classic way at once.
var newMountAPI atomic.Bool

func init() { newMountAPI.Store(true) }

// errOldKernel means the kernel has no mount_setattr: bind the classic way.
var errOldKernel = errors.New("the kernel lacks open_tree/mount_setattr/move_mount")

// attachClone binds a copy of the object open at src (recursively, with
// its submounts, when rec) onto the mount point open at dst, with the
// mount flags flags (MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC) set on
// every mount of the copy. Flags the source's mount is locked with stay
// set: the call only adds.
func attachClone(src int, rec bool, flags uintptr, dst int) error {
	return cloneOnto(src, rec, rec, flags, dst)
}

// attachCloneTop is attachClone of the whole tree at src, submounts
// included, with flags set on its top mount only: the submounts keep
// theirs.
func attachCloneTop(src int, flags uintptr, dst int) error {
	return cloneOnto(src, true, false, flags, dst)
}

// cloneOnto copies the mount at src (with its submounts when withSubs),
// sets flags on the copy (on every mount of it when onSubs), and moves it
// onto dst.
func cloneOnto(src int, withSubs, onSubs bool, flags uintptr, dst int) error {
	if !newMountAPI.Load() {
		return errOldKernel
	}
	treeFlags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_EMPTY_PATH)
	if withSubs {
		treeFlags |= unix.AT_RECURSIVE
	}
	attrFlags := uint(unix.AT_EMPTY_PATH)
	if onSubs {
		attrFlags |= unix.AT_RECURSIVE
	}
	tree, err := unix.OpenTree(src, "", treeFlags)
	if errors.Is(err, unix.ENOSYS) {
		newMountAPI.Store(false)
		return errOldKernel
	}
	if err != nil {
		return err
	}
	defer unix.Close(tree)
	attr := unix.MountAttr{Attr_set: mountAttrs(flags)}
	if err := unix.MountSetattr(tree, "", attrFlags, &attr); err != nil {
		if errors.Is(err, unix.ENOSYS) {
			newMountAPI.Store(false)
			return errOldKernel
		}
		return err
	}
	return unix.MoveMount(tree, "", dst, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// mountAttrs translates classic mount flags to mount_setattr's.
func mountAttrs(flags uintptr) uint64 {
	var a uint64
	for _, m := range []struct {
		ms   uintptr
		attr uint64
	}{
		{unix.MS_RDONLY, unix.MOUNT_ATTR_RDONLY},
		{unix.MS_NOSUID, unix.MOUNT_ATTR_NOSUID},
		{unix.MS_NODEV, unix.MOUNT_ATTR_NODEV},
		{unix.MS_NOEXEC, unix.MOUNT_ATTR_NOEXEC},
	} {
		if flags&m.ms != 0 {
			a |= m.attr
		}
	}
	return a
}
