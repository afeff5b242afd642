//go:build unix

package moat

import "syscall"

// fileIdentity is the device and inode of path itself (not what a link
// there points to), which identify the object checked now.
func fileIdentity(path string) (dev, ino uint64, err error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return 0, 0, err
	}
	return uint64(st.Dev), st.Ino, nil
}
