package diskwatch

import (
	"time"

	"golang.org/x/sys/unix"
)

// setFileSizeLimit lowers RLIMIT_FSIZE of process pid, soft and hard, to
// n bytes, never raising it; the process cannot raise it again.
func setFileSizeLimit(pid int, n int64) {
	if pid <= 0 || n <= 0 {
		return
	}
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, nil, &old); err != nil {
		return
	}
	v := uint64(n)
	if old.Max != unix.RLIM_INFINITY && old.Max <= v && old.Cur <= v {
		return
	}
	lim := unix.Rlimit{Cur: min(v, old.Cur), Max: min(v, old.Max)}
	_ = unix.Prlimit(pid, unix.RLIMIT_FSIZE, &lim, nil)
}

// watchInterval is how often the disk watchdog samples free space and
// free inodes; both come from one statfs per file system, so it is cheap.
const watchInterval = 25 * time.Millisecond
