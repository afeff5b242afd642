package moat

import (
	"runtime"
	"strconv"

	"github.com/moat-sandbox/moat/internal/disklimit"
	"github.com/moat-sandbox/moat/internal/diskwatch"
	"github.com/moat-sandbox/moat/internal/limitkill"
)

// DefaultBytesPerInode is how many bytes of the disk limit buy one inode
// when Limits.DiskInodes is zero: one file or directory per 4 KiB block.
const DefaultBytesPerInode = disklimit.DefaultBytesPerInode

// watchDisk kills c once the command has consumed more than the disk
// limit, in bytes or in inodes, on the file systems of every writable
// place (internal/disklimit, internal/diskwatch). RLIMIT_FSIZE bounds one
// file, and a burst (disklimit.Limit.FileSizeBudget); this bounds many. A
// place that cannot be measured kills the command (fail closed), and a
// command that ended over a limit, faster than one poll, fails with the
// limit's message. It returns a function that stops it, after a last
// sample.
func (c *Cmd) watchDisk() (stop func()) {
	pid := 0
	if c.Process != nil {
		pid = c.Process.Pid
	}
	stop, err := c.sb.disk.Watch(pid, c.fileSize > 0, func(e diskwatch.Exceeded) {
		var k limitkill.Kill
		switch {
		case e.Unmeasured:
			k = limitkill.DiskUnmeasured(e.Err)
		case e.Inodes:
			k = limitkill.Inodes(e.Limit, e.Used)
		default:
			k = limitkill.Disk(e.Limit, e.Used)
		}
		if e.AtExit {
			c.mu.Lock()
			c.overAtExit = true
			c.mu.Unlock()
			k = k.AtExit()
		}
		c.killLimit(k)
	}, func(int64) { c.noteDiskSpent() })
	if err != nil {
		c.killLimit(limitkill.DiskUnmeasured(err))
		return func() {}
	}
	return stop
}

// noteDiskSpent records, once per sandbox, that the disk limit is all but
// spent while c runs: RLIMIT_FSIZE now refuses writes past it, in any
// process of the tree, whether or not the command's exit status shows it
// (a child killed by SIGXFSZ inside a pipe; Python, which ignores SIGXFSZ
// and exits 1 on "File too large").
func (c *Cmd) noteDiskSpent() {
	c.mu.Lock()
	c.diskSpent = true
	c.mu.Unlock()
	c.sb.refused.Add(limitRefusal(limitkill.DiskSpent(c.sb.disk.Bytes())))
}

// writableGrants are the paths of the grants the sandbox may write, which
// count against the disk limit (internal/disklimit: Limit.Grants).
func writableGrants(grants []Grant) []string {
	var out []string
	for _, g := range grants {
		if g.Access.CanWrite() {
			out = append(out, g.Path)
		}
	}
	return out
}

// checkDiskPlatform refuses a disk or inode limit on Windows, where the
// disk watch cannot sample free space yet: a limit that cannot be
// measured is refused, not left unenforced. Zero (the default, which is
// no limit there) and negative (unlimited) pass, and every limit passes
// elsewhere, where the disk watch samples statfs.
func checkDiskPlatform(l Limits) error {
	if runtime.GOOS != "windows" {
		return nil
	}
	switch {
	case l.DiskBytes > 0:
		return &UnsupportedSettingError{Platform: "windows", Setting: "disk limit", Value: strconv.FormatInt(l.DiskBytes, 10), Reason: "the disk watch cannot measure free space here yet; leave the limit out or set it unlimited"}
	case l.DiskInodes > 0:
		return &UnsupportedSettingError{Platform: "windows", Setting: "disk inode limit", Value: strconv.FormatInt(l.DiskInodes, 10), Reason: "the disk watch cannot measure free inodes here yet; leave the limit out or set it unlimited"}
	}
	return nil
}
