package hostview

import (
	"os"

	"golang.org/x/sys/unix"
)

// fsCasefoldFL is FS_CASEFOLD_FL, the inode flag of a directory whose
// names match without regard to case (ext4, f2fs and tmpfs can set it).
const fsCasefoldFL = 0x40000000

// exactNames reports whether the directory f matches names byte for byte,
// so that a name its listing lacks is one lstat cannot find either. Only
// file systems known to match exactly are trusted: not vfat, exfat, NTFS,
// CIFS or FUSE, whose lookups may fold case, and not a directory with
// the casefold flag.
func exactNames(f *os.File) bool {
	fd := int(f.Fd())
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
		return true // never folds case
	case unix.EXT4_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.OVERLAYFS_SUPER_MAGIC:
		flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
		return err == nil && flags&fsCasefoldFL == 0
	}
	return false
}
