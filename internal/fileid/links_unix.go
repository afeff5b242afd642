//go:build unix

package fileid

import "syscall"

// HardLinks returns the link count of the file at p, 0 if it is missing.
func HardLinks(p string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return 0
	}
	return uint64(st.Nlink)
}
