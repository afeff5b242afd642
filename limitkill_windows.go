package moat

import (
	"os"
	"time"
)

// kernelLimitKill: Windows has no rlimits; the sandbox's job object ends
// a process whose user-mode CPU time reaches the limit (the only job
// limit that kills), which its process state shows.
func (c *Cmd) kernelLimitKill(state *os.ProcessState, _ int64) (limitKill, bool) {
	lim := c.sb.cfg.Limits
	if lim.CPUSeconds > 0 && state.UserTime() >= time.Duration(lim.CPUSeconds)*time.Second {
		return cpuKill(lim.CPUSeconds), true
	}
	return limitKill{}, false
}
