//go:build unix

package moat

import (
	"os"
	"syscall"
	"time"
)

// kernelLimitKill recognises a command the kernel ended for one of moat's
// rlimits, from its wait status: SIGXCPU, or SIGKILL once its CPU time
// reached the hard limit (one second past the soft one), is RLIMIT_CPU;
// SIGXFSZ is RLIMIT_FSIZE, which is the file size limit or, when smaller,
// what was left of the disk limit when the command started.
func (c *Cmd) kernelLimitKill(state *os.ProcessState, fsize int64) (limitKill, bool) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return limitKill{}, false
	}
	lim := c.sb.cfg.Limits
	switch ws.Signal() {
	case syscall.SIGXCPU:
		if lim.CPUSeconds > 0 {
			return cpuKill(lim.CPUSeconds), true
		}
	case syscall.SIGKILL:
		if lim.CPUSeconds > 0 && state.UserTime()+state.SystemTime() >= time.Duration(lim.CPUSeconds)*time.Second {
			return cpuKill(lim.CPUSeconds), true
		}
	case syscall.SIGXFSZ:
		if fsize > 0 && (lim.FileSizeBytes <= 0 || fsize < lim.FileSizeBytes) {
			c.mu.Lock()
			spent := c.diskSpent
			c.mu.Unlock()
			if spent { // the same line the disk watch gave (disk.go)
				return diskSpentKill(c.sb.disk.Bytes()), true
			}
			return diskBudgetKill(fsize), true
		}
		if lim.FileSizeBytes > 0 {
			return fileSizeKill(lim.FileSizeBytes), true
		}
	}
	return limitKill{}, false
}
