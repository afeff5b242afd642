//go:build unix

package fspattern

import (
	"os"
	"syscall"
)

// fileKey names one inode: its device and number.
type fileKey struct{ dev, ino uint64 }

// linkInfo returns fi's inode and link count; ok is false where the
// platform does not say.
func linkInfo(fi os.FileInfo) (fileKey, uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, 0, false
	}
	return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino)}, uint64(st.Nlink), true
}

// LinkCount returns how many hard links the file fi describes has; ok is
// false where the platform does not say.
func LinkCount(fi os.FileInfo) (n uint64, ok bool) {
	_, n, ok = linkInfo(fi)
	return n, ok
}
