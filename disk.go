package moat

import (
	"io/fs"
	"path/filepath"
	"time"
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
	var free int64 = -1
	for _, root := range s.diskRoots() {
		if st, err := statFS(root); err == nil && st.totalInodes > 0 && (free < 0 || st.freeInodes < free) {
			free = st.freeInodes
		}
	}
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

// diskBaseline is the state of the file systems the sandbox writes to when
// a command starts. Roots on one file system are counted once; one that
// does not count inodes is counted by walking it.
type diskBaseline struct {
	roots []string        // one root per file system
	start []fsSample      // statfs of each at start
	walk  map[int]int64   // root index -> entries counted at start, where statfs has no inodes
	last  map[int]walkLog // when each walk last ran and how long it took
}

type walkLog struct {
	at   time.Time
	took time.Duration
}

func (s *Sandbox) newDiskBaseline(inodeLimit int64) (*diskBaseline, error) {
	b := &diskBaseline{walk: map[int]int64{}, last: map[int]walkLog{}}
	seen := map[[2]int32]bool{}
	for _, root := range s.diskRoots() {
		st, err := statFS(root)
		if err != nil {
			if len(b.roots) == 0 {
				return nil, err // the working directory itself
			}
			continue
		}
		if seen[st.id] {
			continue
		}
		seen[st.id] = true
		b.roots = append(b.roots, root)
		b.start = append(b.start, st)
		if st.totalInodes == 0 && inodeLimit > 0 {
			b.walk[len(b.roots)-1] = countEntries(root, -1)
		}
	}
	return b, nil
}

// usage returns the bytes and inodes consumed since the baseline. Walks
// are bounded: each stops once it has seen more than inodeLimit new
// entries, and runs at most once per ten times its last duration.
func (b *diskBaseline) usage(inodeLimit int64) (bytes, inodes int64) {
	for i, root := range b.roots {
		st, err := statFS(root)
		if err != nil {
			continue
		}
		bytes += b.start[i].availBytes - st.availBytes
		if base, ok := b.walk[i]; ok {
			l := b.last[i]
			if time.Since(l.at) < 10*l.took {
				continue
			}
			t := time.Now()
			n := countEntries(root, base+inodeLimit+1)
			b.last[i] = walkLog{at: t, took: time.Since(t)}
			inodes += n - base
			continue
		}
		inodes += b.start[i].freeInodes - st.freeInodes
	}
	return bytes, inodes
}

// countEntries counts the entries below root, stopping past stop when
// stop is not negative. Entries it may not read are not counted.
func countEntries(root string, stop int64) int64 {
	var n int64
	_ = filepath.WalkDir(root, func(_ string, _ fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n++
		if stop >= 0 && n > stop {
			return fs.SkipAll
		}
		return nil
	})
	return n
}

// watchDisk samples the file systems of the working directory and the
// private roots and kills c once the command has consumed more than the
// disk limit, in bytes or in inodes. RLIMIT_FSIZE bounds one file, and a
// burst (fileSizeBudget); this bounds many. As the budget shrinks, the
// command's own RLIMIT_FSIZE is lowered to what is left. It returns a
// function that stops it.
func (s *Sandbox) watchDisk(c *Cmd) (stop func()) {
	limit, inodeLimit := s.diskLimitBytes, s.diskInodeLimit
	if limit <= 0 && inodeLimit <= 0 {
		return func() {}
	}
	base, err := s.newDiskBaseline(inodeLimit)
	if err != nil {
		return func() {}
	}
	pid := 0
	if c.Process != nil {
		pid = c.Process.Pid
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(diskWatchInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			used, files := base.usage(inodeLimit)
			switch {
			case limit > 0 && used > limit:
				c.killLimit(diskKill(limit, used))
				return
			case inodeLimit > 0 && files > inodeLimit:
				c.killLimit(inodeKill(inodeLimit, files))
				return
			case limit > 0 && c.fileSize > 0 && used > 0:
				setFileSizeLimit(pid, limit-used)
			}
		}
	}()
	return func() { close(done) }
}
