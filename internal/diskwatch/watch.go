// Package diskwatch bounds what a sandboxed command writes to disk: it
// samples the file systems the sandbox writes to and reports a command
// that has consumed more than its limit, in bytes or in inodes.
package diskwatch

import (
	"io/fs"
	"path/filepath"
	"time"
)

// Exceeded says which limit a command passed: Inodes false is the byte
// limit. Used is what it consumed of that limit.
type Exceeded struct {
	Inodes bool
	Limit  int64
	Used   int64
}

// Watch samples the file systems of roots (the first is the working
// directory; the rest are counted when they can be read) every interval
// and calls exceeded once, from its own goroutine, when a command has
// consumed more than limit bytes or inodeLimit inodes since the start;
// zero means no limit. While neither is passed and lowerFileSize is set,
// the RLIMIT_FSIZE of process pid is lowered to the bytes left, so a
// single burst cannot outrun the sampling. It returns a function that
// stops watching.
func Watch(roots []string, limit, inodeLimit int64, pid int, lowerFileSize bool, exceeded func(Exceeded)) (stop func()) {
	if limit <= 0 && inodeLimit <= 0 {
		return func() {}
	}
	base, err := newBaseline(roots, inodeLimit)
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(watchInterval)
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
				exceeded(Exceeded{Limit: limit, Used: used})
				return
			case inodeLimit > 0 && files > inodeLimit:
				exceeded(Exceeded{Inodes: true, Limit: inodeLimit, Used: files})
				return
			case limit > 0 && lowerFileSize && used > 0:
				// Free space also moves by a few blocks on its own (ext4
				// gives back preallocations), so what is measured can
				// fall short of what was written: the burst is stopped
				// measureSlack early, never late.
				setFileSizeLimit(pid, max(limit-used-measureSlack, 1))
			}
		}
	}()
	return func() { close(done) }
}

// measureSlack is what a file-size limit lowered to the bytes left holds
// back for the file system's own noise in free space: 16 KiB was seen on
// ext4, sixteen blocks allow for more.
const measureSlack = 64 << 10

// FreeInodes is the fewest free inodes among roots' file systems that
// count them, or -1 when none does.
func FreeInodes(roots []string) int64 {
	var free int64 = -1
	for _, root := range roots {
		if st, err := statFS(root); err == nil && st.totalInodes > 0 && (free < 0 || st.freeInodes < free) {
			free = st.freeInodes
		}
	}
	return free
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

func newBaseline(roots []string, inodeLimit int64) (*diskBaseline, error) {
	b := &diskBaseline{walk: map[int]int64{}, last: map[int]walkLog{}}
	seen := map[[2]int32]bool{}
	for _, root := range roots {
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
