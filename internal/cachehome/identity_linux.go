package cachehome

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Identify returns the project of the directory at path (not through a
// link in its last element): its device and inode, and its birth, which
// an inode number reused for a directory made later does not share: the
// birth time (statx STATX_BTIME) and the inode generation
// (FS_IOC_GETVERSION), each where the file system keeps it. ext4 and xfs
// keep both; with neither it is [ErrNoIdentity].
func Identify(path string) (Project, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return Project{}, err
	}
	defer unix.Close(fd)
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_BTIME, &st); err != nil {
		return Project{}, err
	}
	p := Project{Path: path, Dev: unix.Mkdev(st.Dev_major, st.Dev_minor), Ino: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		p.Born = fmt.Sprintf("btime %d.%09d", st.Btime.Sec, st.Btime.Nsec)
	}
	// The birth time ticks in jiffies: a directory removed and made
	// again at once can share it, and its inode number. The generation
	// (random on ext4) tells them apart.
	if req := getVersionReq(); req != 0 {
		if g, err := unix.IoctlGetInt(fd, req); err == nil {
			p.Born += fmt.Sprintf(" gen %d", uint32(g))
		}
	}
	if p.Born == "" {
		return Project{}, ErrNoIdentity
	}
	return p, nil
}

// getVersionReq is FS_IOC_GETVERSION, _IOR('v', 1, long), on the
// architectures whose ioctl numbers moat spells; 0 elsewhere.
func getVersionReq() uint {
	switch runtime.GOARCH {
	case "amd64", "arm64", "riscv64", "loong64", "s390x":
		return 0x80087601
	case "386", "arm":
		return 0x80047601
	}
	return 0
}
