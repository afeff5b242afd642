package moat

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// defaultMemoryBytes is half of physical memory, or 8 GiB if unknown.
func defaultMemoryBytes() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil && si.Totalram > 0 {
		return int64(si.Totalram) * int64(si.Unit) / 2
	}
	return 8 << 30
}

// defaultOpenFiles is def (DefaultOpenFiles), or the host's hard limit if
// lower.
func defaultOpenFiles(def int64) int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err == nil && r.Max < uint64(def) {
		return int64(r.Max)
	}
	return def
}

// exited reports whether pid has exited, without reaping it.
func exited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil {
		return true // not our child any more: reaped already
	}
	return info.Signo != 0 // zero siginfo means still running
}

// freeBytes is the space available to unprivileged users on dir's file
// system.
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
