//go:build darwin || freebsd || netbsd

package cachehome

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Identify returns the project of the directory at path (not through a
// link in its last element): its device and inode, and its birth time,
// which an inode number reused for a directory made later does not
// share. Without a birth time it is [ErrNoIdentity].
func Identify(path string) (Project, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return Project{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return Project{}, fmt.Errorf("%s: not a directory", path)
	}
	if st.Btim.Sec == 0 && st.Btim.Nsec == 0 {
		return Project{}, ErrNoIdentity
	}
	return Project{Path: path, Dev: uint64(st.Dev), Ino: uint64(st.Ino),
		Born: fmt.Sprintf("btime %d.%09d gen %d", st.Btim.Sec, st.Btim.Nsec, st.Gen)}, nil
}
