package moat

import "os"

// kernelLimitKill: Windows has no rlimits, so no kill is the kernel's.
func (c *Cmd) kernelLimitKill(*os.ProcessState, int64) (limitKill, bool) { return limitKill{}, false }
