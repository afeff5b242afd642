// Package limitkill words the limits that end a command: moat killed it
// (memory, disk, timeout) or the kernel did on moat's behalf (CPU time,
// file size). Each kill names its subject and the settings id that allows
// more, which package moat turns into a refusal of kind "limit" and the
// ExitError's reason.
package limitkill

import (
	"strconv"
	"strings"
	"time"

	"github.com/moat-sandbox/moat/internal/settings"
	"github.com/moat-sandbox/moat/internal/size"
)

// Kill is one limit that ended a command. Every kind goes through the same
// path, moat's Cmd.limitKilled, so each is told once, as a refusal of kind
// "limit" and as the ExitError's reason, which `moat run` prints as its
// one "moat:" line. The zero value is no kill.
type Kill struct {
	// Subject is the limit: "memory", "disk", "disk-inodes", "cpu-time",
	// "file-size" or "timeout".
	Subject string
	// Detail says what happened, in words.
	Detail string
	// Setting is the settings id that allows more.
	Setting string
	// Value is the value to give it, when the kill says ("unlimited").
	Value string
}

// The limit kills, one constructor each so that every message names the
// flag and the Config field that would allow more.

// Memory is the memory watch's kill of a sandbox over limit bytes;
// detail is what it measured.
func Memory(limit int64, detail string) Kill {
	// The watch could not measure (the sandbox's init says so with this
	// prefix, the linux backend's UnmeasuredPrefix): nothing was found
	// over the limit, and the message must not say so.
	if what, ok := strings.CutPrefix(detail, "unmeasured: "); ok {
		return Kill{"memory", "killed: the memory watch could not measure the sandbox (" + what +
			"), which is treated as over its " + size.Human(limit) + " limit", "limits.memory", settings.Unlimited}
	}
	d := "killed: the sandbox used more than " + size.Human(limit)
	if detail != "" {
		d += " (" + detail + ")"
	}
	return Kill{"memory", d, "limits.memory", ""}
}

// Disk is the disk watch's kill of a sandbox that wrote used bytes,
// more than limit.
func Disk(limit int64, used int64) Kill {
	return Kill{"disk", "killed: the sandbox wrote " + size.Human(used) + ", more than its " + size.Human(limit),
		"limits.disk", ""}
}

// DiskBudget is a file that reached the limit bytes left of the disk
// limit (RLIMIT_FSIZE).
func DiskBudget(limit int64) Kill {
	return Kill{"disk", "killed: a file reached the " + size.Human(limit) + " left of the disk limit",
		"limits.disk", ""}
}

// DiskSpent is the disk limit reached, with writes past it refused
// by RLIMIT_FSIZE rather than a kill by moat: the disk watch's report
// (moat's disk.go: noteDiskSpent), and a command that SIGXFSZ ended then.
func DiskSpent(limit int64) Kill {
	return Kill{"disk", "writes reached the " + size.Human(limit) + " disk limit: a write past it fails with \"File too large\" (EFBIG) or ends its process with SIGXFSZ",
		"limits.disk", ""}
}

// Inodes is the disk watch's kill of a sandbox that created used files
// and directories, more than limit.
func Inodes(limit int64, used int64) Kill {
	return Kill{"disk-inodes", "killed: the sandbox created " + strconv.FormatInt(used, 10) +
		" files and directories, more than its " + strconv.FormatInt(limit, 10), "limits.disk-inodes", ""}
}

// AtExit rewords a disk or inode kill found by the disk watch's last
// sample, after the command ended on its own: a burst faster than one
// poll.
func (k Kill) AtExit() Kill {
	k.Detail = strings.Replace(k.Detail, "killed: ", "refused at exit: ", 1) + " (written faster than one poll, found when the command ended)"
	return k
}

// DiskUnmeasured is the disk watch failing closed: a writable place's
// file system could no longer be sampled.
func DiskUnmeasured(err error) Kill {
	return Kill{"disk", "killed: the disk limit cannot be measured: " + err.Error() + "; lifting it takes --disk-inodes unlimited too",
		"limits.disk", settings.Unlimited}
}

// CPU is a process that used seconds of CPU time (RLIMIT_CPU).
func CPU(seconds int64) Kill {
	return Kill{"cpu-time", "killed: a process used " + strconv.FormatInt(seconds, 10) + "s of CPU time",
		"limits.cpu-time", ""}
}

// FileSize is a file that reached limit bytes (RLIMIT_FSIZE).
func FileSize(limit int64) Kill {
	return Kill{"file-size", "killed: a file reached " + size.Human(limit), "limits.file-size", ""}
}

// Timeout is a command killed after d.
func Timeout(d time.Duration) Kill {
	return Kill{"timeout", "killed after " + d.String(), "limits.timeout", ""}
}
