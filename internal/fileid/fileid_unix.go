//go:build unix

package fileid

import (
	"os"
	"syscall"
)

// Identity is the device and inode of path itself (not what a link
// there points to), which identify the object checked now.
func Identity(path string) (dev, ino uint64, err error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return 0, 0, err
	}
	return uint64(st.Dev), st.Ino, nil
}

// IdentityOf is the device and inode of the file fi describes; zero when
// fi does not come from a stat of this system.
func IdentityOf(fi os.FileInfo) (dev, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Dev), st.Ino
}
