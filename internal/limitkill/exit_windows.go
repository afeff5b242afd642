package limitkill

import (
	"os"
	"time"
)

// FromExit: Windows has no rlimits; the sandbox's job object ends a
// process whose user-mode CPU time reaches the limit (the only job limit
// that kills), which its process state shows.
func FromExit(state *os.ProcessState, _ int64, lim Limits, _ func() bool) (Kill, bool) {
	if lim.CPUSeconds > 0 && state.UserTime() >= time.Duration(lim.CPUSeconds)*time.Second {
		return CPU(lim.CPUSeconds), true
	}
	return Kill{}, false
}
