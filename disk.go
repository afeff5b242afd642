package moat

import (
	"fmt"
	"time"

	"github.com/moat-sandbox/moat/internal/diskwatch"
	"github.com/moat-sandbox/moat/internal/limitkill"
)

// diskLimit returns the bytes the working directory's file system may lose
// while a command runs: the configured value, or half the space free now.
func (s *Sandbox) diskLimit() int64 {
	switch v := s.cfg.Limits.DiskBytes; {
	case v > 0:
		return v
	case v == 0:
		return 0
	}
	free, err := freeBytes(s.dirs.Work)
	if err != nil {
		return 0
	}
	return free / 2
}

// DefaultBytesPerInode is how many bytes of the disk limit buy one inode
// when Limits.DiskInodes is zero: one file or directory per 4 KiB block.
const DefaultBytesPerInode = 4096

// minDefaultInodes is the fewest inodes a derived default allows.
const minDefaultInodes = 1024

// inodeLimit returns how many files and directories the sandbox may create
// while a command runs: the configured value, or one per
// DefaultBytesPerInode of the disk limit (at least minDefaultInodes), and
// never more than half the inodes free now; zero means none.
func (s *Sandbox) inodeLimit() int64 {
	v := s.cfg.Limits.DiskInodes
	switch {
	case v > 0:
		return v
	case v < 0:
		return 0
	}
	free := diskwatch.FreeInodes(s.diskRoots())
	limit := int64(-1)
	if s.diskLimitBytes > 0 {
		limit = max(s.diskLimitBytes/DefaultBytesPerInode, minDefaultInodes)
	}
	if free >= 0 && (limit < 0 || free/2 < limit) {
		limit = free / 2
	}
	if limit < 0 {
		// No byte limit and no inode count to halve: a walk still counts
		// entries, against the same ceiling as a 4 GiB disk limit.
		limit = (4 << 30) / DefaultBytesPerInode
	}
	return max(limit, 1)
}

// diskRoots are every host place the sandbox may write, on whatever file
// system each lies: the working directory, the private roots, and the
// writable grants. The disk watch counts each file system once.
func (s *Sandbox) diskRoots() []string {
	roots := append([]string{s.dirs.Work}, s.dirs.PrivateRoots(s.cacheStores())...)
	for _, g := range s.cfg.Grants {
		if g.Access.CanWrite() {
			roots = append(roots, g.Path)
		}
	}
	return roots
}

// fileSizeBudget is the RLIMIT_FSIZE every command starts with when the
// disk limit is smaller than the file size limit: a single burst write
// then stops at the disk limit, however fast it is, instead of outrunning
// the watchdog. Zero means the file size limit holds as configured.
func (s *Sandbox) fileSizeBudget() int64 {
	d, f := s.diskLimitBytes, s.cfg.Limits.FileSizeBytes
	if d > 0 && (f <= 0 || d < f) {
		return d
	}
	return 0
}

// startFileSize is the RLIMIT_FSIZE the engine applies, before New has
// resolved the disk limit: the file size limit, or the disk limit where
// that is smaller.
func (s *Sandbox) startFileSize() int64 {
	d, f := s.diskLimit(), s.cfg.Limits.FileSizeBytes
	if d > 0 && (f <= 0 || d < f) {
		return d
	}
	return f
}

// watchDisk kills c once the command has consumed more than the disk
// limit, in bytes or in inodes, on the file systems of every writable
// place (diskRoots, internal/diskwatch). RLIMIT_FSIZE bounds one file,
// and a burst (fileSizeBudget); this bounds many. A place that cannot be
// measured kills the command (fail closed), and a command that ended
// over a limit, faster than one poll, fails with the limit's message. It
// returns a function that stops it, after a last sample.
func (s *Sandbox) watchDisk(c *Cmd) (stop func()) {
	pid := 0
	if c.Process != nil {
		pid = c.Process.Pid
	}
	s.diskWatches.Add(1)
	stop, err := diskwatch.Watch(s.diskRoots(), s.diskLimitBytes, s.diskInodeLimit, pid, c.fileSize > 0, func(e diskwatch.Exceeded) {
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

// diskLayer says how the disk limits are enforced, for Report.
func (s *Sandbox) diskLayer() Layer {
	if s.diskLimitBytes <= 0 && s.diskInodeLimit <= 0 {
		return Layer{Name: "disk", Detail: "no disk or inode limit"}
	}
	n, counted := diskwatch.FileSystems(s.diskRoots())
	d := fmt.Sprintf("free space and free inodes of the %d file system(s) of every writable place (working directory, private temp and home, writable grants), sampled every %v and when each command ends; exact where nothing else writes them (another writer's use counts against the sandbox, and what it frees on the same file system offsets the sandbox's use there); a burst between two samples is bounded by one sample's worth of writes, and RLIMIT_FSIZE holds each file to the bytes left", n, diskwatch.Interval.Round(time.Millisecond))
	if n > counted {
		d += fmt.Sprintf("; %d file system(s) without inode counts are walked instead", n-counted)
	}
	return Layer{Name: "disk", Active: true, Detail: d}
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
	c.sb.addRefusal(limitRefusal(limitkill.DiskSpent(c.sb.diskLimitBytes)))
}
