//go:build unix

package limitkill

import (
	"os"
	"syscall"
	"time"
)

// FromExit recognises a command the kernel ended for one of moat's
// rlimits, from its wait status: SIGXCPU, or SIGKILL once its CPU time
// reached the hard limit (one second past the soft one), is RLIMIT_CPU;
// SIGXFSZ is RLIMIT_FSIZE, which is the file size limit or, when smaller,
// fsize, what was left of the disk limit when the command started.
// diskSpent says whether the disk watch found the disk limit all but
// spent while the command ran.
func FromExit(state *os.ProcessState, fsize int64, lim Limits, diskSpent func() bool) (Kill, bool) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return Kill{}, false
	}
	switch ws.Signal() {
	case syscall.SIGXCPU:
		if lim.CPUSeconds > 0 {
			return CPU(lim.CPUSeconds), true
		}
	case syscall.SIGKILL:
		if lim.CPUSeconds > 0 && state.UserTime()+state.SystemTime() >= time.Duration(lim.CPUSeconds)*time.Second {
			return CPU(lim.CPUSeconds), true
		}
	case syscall.SIGXFSZ:
		if fsize > 0 && (lim.FileSizeBytes <= 0 || fsize < lim.FileSizeBytes) {
			if diskSpent() { // the same line the disk watch gave (moat's disk.go)
				return DiskSpent(lim.DiskBytes), true
			}
			return DiskBudget(fsize), true
		}
		if lim.FileSizeBytes > 0 {
			return FileSize(lim.FileSizeBytes), true
		}
	}
	return Kill{}, false
}
