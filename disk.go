package moat

import "github.com/moat-sandbox/moat/internal/diskwatch"

// diskLimit returns the bytes the working directory's file system may lose
// while a command runs: the configured value, or half the space free now.
func (s *Sandbox) diskLimit() int64 {
	switch v := s.cfg.Limits.DiskBytes; {
	case v > 0:
		return v
	case v == 0:
		return 0
	}
	free, err := freeBytes(s.workDir)
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

// diskRoots are the host directories the sandbox writes to besides its
// grants: the working directory and the private roots.
func (s *Sandbox) diskRoots() []string {
	return append([]string{s.workDir}, s.privateRoots()...)
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
// limit, in bytes or in inodes, on the file systems of the working
// directory and the private roots (internal/diskwatch). RLIMIT_FSIZE
// bounds one file, and a burst (fileSizeBudget); this bounds many. It
// returns a function that stops it.
func (s *Sandbox) watchDisk(c *Cmd) (stop func()) {
	pid := 0
	if c.Process != nil {
		pid = c.Process.Pid
	}
	return diskwatch.Watch(s.diskRoots(), s.diskLimitBytes, s.diskInodeLimit, pid, c.fileSize > 0, func(e diskwatch.Exceeded) {
		if e.Inodes {
			c.killLimit(inodeKill(e.Limit, e.Used))
		} else {
			c.killLimit(diskKill(e.Limit, e.Used))
		}
	})
}
