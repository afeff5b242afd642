package moat

import (
	"os"

	"github.com/moat-sandbox/moat/internal/limitkill"
)

// limitRefusal is limit kill k as a refusal of kind "limit".
func limitRefusal(k limitkill.Kill) Refusal {
	return Refusal{Kind: "limit", Subject: k.Subject, Detail: k.Detail, Setting: k.Setting, Value: k.Value}.derived()
}

// limitKilled records k once: as the reason the ExitError gives (the first
// one wins) and as a refusal of the sandbox.
func (c *Cmd) limitKilled(k limitkill.Kill) string {
	r := limitRefusal(k)
	reason := r.String()
	c.mu.Lock()
	first := c.reason == ""
	if first {
		c.reason, c.limit = reason, k.Subject
	}
	c.mu.Unlock()
	if first {
		c.sb.addRefusal(r)
	}
	return reason
}

// limitOf names the limit that ended the command, or "" for none.
func (c *Cmd) limitOf() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

// kernelLimitKill recognises a command the kernel ended for one of moat's
// rlimits, from its wait status (internal/limitkill: FromExit).
func (c *Cmd) kernelLimitKill(state *os.ProcessState, fsize int64) (limitkill.Kill, bool) {
	lim := c.sb.cfg.Limits
	return limitkill.FromExit(state, fsize, limitkill.Limits{CPUSeconds: lim.CPUSeconds, FileSizeBytes: lim.FileSizeBytes, DiskBytes: c.sb.diskLimitBytes}, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.diskSpent
	})
}
