//go:build linux || darwin

package diskwatch

import "golang.org/x/sys/unix"

// fsSample is one file system's free space and free inodes, and its
// identity, so that roots on the same file system are counted once.
type fsSample struct {
	id          [2]int32
	availBytes  int64
	freeInodes  int64
	totalInodes int64 // zero where the file system does not count inodes (btrfs)
}

// statFS samples the file system that holds dir.
func statFS(dir string) (fsSample, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fsSample{}, err
	}
	return fsSample{
		id:          st.Fsid.Val,
		availBytes:  int64(st.Bavail) * int64(st.Bsize),
		freeInodes:  int64(st.Ffree),
		totalInodes: int64(st.Files),
	}, nil
}
