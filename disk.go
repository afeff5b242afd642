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

// watchDisk starts the disk watch of limit d for the command whose
// process pid returns (0 until it exists: the watch starts before the
// command, so that its baseline holds nothing the command wrote), capped when its RLIMIT_FSIZE was lowered to what is
// left (internal/disklimit, internal/diskwatch): kill is called with the
// limit passed, in bytes or in inodes, on the file systems of every
// writable place, atExit telling that the last sample, after the command
// ended, found it; spent is called once the limit is all but spent.
// RLIMIT_FSIZE bounds one file, and a burst (disklimit.Limit.FileSizeBudget);
// this bounds many. A place that cannot be measured kills the command
// (fail closed). It returns a function that stops it, after a last
// sample.
func watchDisk(d *disklimit.Limit, pid func() int, capped bool, kill func(k limitkill.Kill, atExit bool), spent func()) (stop func()) {
	stop, err := d.Watch(pid, capped, func(e diskwatch.Exceeded) {
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
			k = k.AtExit()
		}
		kill(k, e.AtExit)
	}, func(int64) { spent() })
	if err != nil {
		kill(limitkill.DiskUnmeasured(err), false)
		return func() {}
	}
	return stop
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
