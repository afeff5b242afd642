// Package hostfacts reads what moat's root package needs of the host
// outside a backend: the physical memory and the open-file hard limit that
// the default limits follow, the space free for the disk limit, and
// whether a child has exited. Where it cannot measure a fact (off Linux),
// it answers a fixed guess. It imports nothing of moat's.
package hostfacts

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// HalfMemory is half of physical memory, or 8 GiB if unknown.
func HalfMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err == nil && si.Totalram > 0 {
		return int64(si.Totalram) * int64(si.Unit) / 2
	}
	return 8 << 30
}

// OpenFiles is def, or the host's hard limit on open files if lower.
func OpenFiles(def int64) int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err == nil && r.Max < uint64(def) {
		return int64(r.Max)
	}
	return def
}

// Exited reports whether pid, a child of this process, has exited,
// without reaping it.
func Exited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil {
		return true // not our child any more: reaped already
	}
	return info.Signo != 0 // zero siginfo means still running
}

// FreeBytes is the space available to unprivileged users on dir's file
// system.
func FreeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
