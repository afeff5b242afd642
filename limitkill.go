package moat

import (
	"strconv"
	"strings"
	"time"

	"github.com/moat-sandbox/moat/internal/refusal"
	"github.com/moat-sandbox/moat/internal/settings"
)

// limitKill is one limit that ended a command: moat killed it (memory,
// disk, timeout) or the kernel did on moat's behalf (CPU time, file size).
// Every kind goes through the same path, Cmd.limitKilled, so each is told
// once, as a [Refusal] of kind "limit" and as the [ExitError]'s reason,
// which `moat run` prints as its one "moat:" line.
type limitKill struct {
	subject string // "memory", "disk", "disk-inodes", "cpu-time", "file-size", "timeout"
	detail  string
	setting string // the settings id that allows more
	value   string // the value to give it, when the kill says ("unlimited")
}

func (k limitKill) refusal() Refusal {
	return refusal.Derived(Refusal{Kind: "limit", Subject: k.subject, Detail: k.detail, Setting: k.setting, Value: k.value})
}

// The limit kills, one constructor each so that every message names the
// flag and the Config field that would allow more.

func memoryKill(limit int64, detail string) limitKill {
	// The watch could not measure (the sandbox's init says so with this
	// prefix, the linux backend's UnmeasuredPrefix): nothing was found
	// over the limit, and the message must not say so.
	if what, ok := strings.CutPrefix(detail, "unmeasured: "); ok {
		return limitKill{"memory", "killed: the memory watch could not measure the sandbox (" + what +
			"), which is treated as over its " + formatBytes(limit) + " limit", "limits.memory", settings.Unlimited}
	}
	d := "killed: the sandbox used more than " + formatBytes(limit)
	if detail != "" {
		d += " (" + detail + ")"
	}
	return limitKill{"memory", d, "limits.memory", ""}
}

func diskKill(limit int64, used int64) limitKill {
	return limitKill{"disk", "killed: the sandbox wrote " + formatBytes(used) + ", more than its " + formatBytes(limit),
		"limits.disk", ""}
}

func diskBudgetKill(limit int64) limitKill {
	return limitKill{"disk", "killed: a file reached the " + formatBytes(limit) + " left of the disk limit",
		"limits.disk", ""}
}

// diskSpentKill is the disk limit reached, with writes past it refused
// by RLIMIT_FSIZE rather than a kill by moat: the disk watch's report
// (disk.go: noteDiskSpent), and a command that SIGXFSZ ended then.
func diskSpentKill(limit int64) limitKill {
	return limitKill{"disk", "writes reached the " + formatBytes(limit) + " disk limit: a write past it fails with \"File too large\" (EFBIG) or ends its process with SIGXFSZ",
		"limits.disk", ""}
}

func inodeKill(limit int64, used int64) limitKill {
	return limitKill{"disk-inodes", "killed: the sandbox created " + strconv.FormatInt(used, 10) +
		" files and directories, more than its " + strconv.FormatInt(limit, 10), "limits.disk-inodes", ""}
}

// atExit rewords a disk or inode kill found by the disk watch's last
// sample, after the command ended on its own: a burst faster than one
// poll.
func (k limitKill) atExit() limitKill {
	k.detail = strings.Replace(k.detail, "killed: ", "refused at exit: ", 1) + " (written faster than one poll, found when the command ended)"
	return k
}

// diskUnmeasuredKill is the disk watch failing closed: a writable place's
// file system could no longer be sampled.
func diskUnmeasuredKill(err error) limitKill {
	return limitKill{"disk", "killed: the disk limit cannot be measured: " + err.Error() + "; lifting it takes --disk-inodes unlimited too",
		"limits.disk", settings.Unlimited}
}

func cpuKill(seconds int64) limitKill {
	return limitKill{"cpu-time", "killed: a process used " + strconv.FormatInt(seconds, 10) + "s of CPU time",
		"limits.cpu-time", ""}
}

func fileSizeKill(limit int64) limitKill {
	return limitKill{"file-size", "killed: a file reached " + formatBytes(limit), "limits.file-size", ""}
}

func timeoutKill(d time.Duration) limitKill {
	return limitKill{"timeout", "killed after " + d.String(), "limits.timeout", ""}
}

// limitKilled records k once: as the reason the ExitError gives (the first
// one wins) and as a refusal of the sandbox.
func (c *Cmd) limitKilled(k limitKill) string {
	r := k.refusal()
	reason := r.String()
	c.mu.Lock()
	first := c.reason == ""
	if first {
		c.reason, c.limit = reason, k.subject
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

// formatBytes writes n in the largest binary unit that keeps it readable:
// "64 MiB", "1.5 GiB", "512 bytes".
func formatBytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	v := float64(n)
	u := ""
	for _, unit := range units {
		if v < 1024 {
			break
		}
		v /= 1024
		u = unit
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10) + " " + u
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + u
}
