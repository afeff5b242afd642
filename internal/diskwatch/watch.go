// Package diskwatch bounds what a sandboxed command writes to disk: it
// samples the file systems of every place the sandbox may write (its
// working directory, private temp and home, and writable grants, on
// whatever file system each lies) and reports a command that has consumed
// more than its limit, in bytes or in inodes.
//
// What it measures is each file system's free space and free inodes, one
// statfs per file system per poll, against the values at the start. It is
// exact where nothing else writes that file system. Another writer's use
// counts against the sandbox; what another writer frees on the same file
// system offsets the sandbox's use there, but each file system counts only
// what it lost, so space freed on one never pays for another. A burst
// between two polls is bounded by one poll ([Interval]) of writes, and by
// the last sample when the command exits: a command that ends over its
// limit is reported too. A single file is bounded by RLIMIT_FSIZE, lowered
// to the bytes left.
package diskwatch

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"
)

// Exceeded says which limit a command passed: Inodes false is the byte
// limit. Used is what it consumed of that limit. Unmeasured, with Err,
// says that a place could no longer be measured: the watch fails closed
// and reports it like a limit passed. The zero value is the byte limit.
type Exceeded struct {
	Inodes bool
	Limit  int64
	Used   int64
	// AtExit is set when the excess was found by the last sample, after
	// the command ended: it was faster than one poll.
	AtExit bool
	// Unmeasured is set when a place's file system could not be sampled;
	// Err says why.
	Unmeasured bool
	Err        error
}

// Interval is how often the watch samples the file systems; a burst of
// writes between two samples is what it can miss until the next one, or
// the command's end.
const Interval = watchInterval

// Watch samples the file systems of roots every Interval and calls
// exceeded once, from its own goroutine, when a command has consumed more
// than limit bytes or inodeLimit inodes since the start; zero means no
// limit. Every root must be measurable: one whose file system cannot be
// sampled at the start is an error, and later is reported as Unmeasured.
// While neither limit is passed and lowerFileSize is set, the
// RLIMIT_FSIZE of the process pid returns is lowered to the bytes left, so
// a single burst cannot outrun the sampling; pid may return 0 (or be nil)
// before the process exists, so that the baseline is taken before the
// command can write anything. The function it returns stops
// watching after one last sample, which reports (from the caller's
// goroutine) what a command that already ended consumed past the limits.
//
// spent, when not nil and lowerFileSize is set, is called once, from the
// goroutine that sampled, when a sample finds the byte limit all but
// spent (within SpentSlack) without being passed: RLIMIT_FSIZE, held to
// the bytes left, now refuses writes with EFBIG ("File too large") or
// SIGXFSZ, in whichever process of the tree makes them, which no exit
// status of the command need show (a child in a pipe, a program that
// ignores SIGXFSZ and exits 1).
func Watch(roots []string, limit, inodeLimit int64, pid func() int, lowerFileSize bool, exceeded func(Exceeded), spent func(used int64)) (stop func(), err error) {
	if limit <= 0 && inodeLimit <= 0 {
		return func() {}, nil
	}
	base, err := newBaseline(roots, inodeLimit)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	report := func(e Exceeded) { once.Do(func() { exceeded(e) }) }
	var spentOnce sync.Once
	noteSpent := func(used int64) {
		if spent != nil && lowerFileSize {
			spentOnce.Do(func() { spent(used) })
		}
	}
	check := func(atExit bool) bool {
		used, files, err := base.usage(inodeLimit, atExit)
		switch {
		case err != nil:
			report(Exceeded{Unmeasured: true, Err: err, AtExit: atExit})
		case limit > 0 && used > limit:
			report(Exceeded{Limit: limit, Used: used, AtExit: atExit})
		case inodeLimit > 0 && files > inodeLimit:
			report(Exceeded{Inodes: true, Limit: inodeLimit, Used: files, AtExit: atExit})
		default:
			if limit > 0 && used >= limit-SpentSlack(limit) {
				noteSpent(used)
			}
			if !atExit && limit > 0 && lowerFileSize && used > 0 {
				// Free space also moves by a few blocks on its own
				// (ext4 gives back preallocations), so what is
				// measured can fall short of what was written: the
				// burst is stopped measureSlack early, never late.
				if p := pidOf(pid); p > 0 {
					setFileSizeLimit(p, max(limit-used-measureSlack, 1))
				}
			}
			return false
		}
		return true
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if check(false) {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		check(true)
	}, nil
}

// measureSlack is what a file-size limit lowered to the bytes left holds
// back for the file system's own noise in free space: 16 KiB was seen on
// ext4, sixteen blocks allow for more.
const measureSlack = 64 << 10

// SpentSlack is how close to limit the bytes used must come for the
// budget to count as spent: measureSlack, or an eighth of a small limit.
// A file RLIMIT_FSIZE stopped at the bytes left brings the measure there;
// the file system's own noise in free space is within it.
func SpentSlack(limit int64) int64 { return min(measureSlack, limit/8) }

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

// FileSystems counts the distinct file systems that hold roots, and says
// how many of them count inodes in statfs (the others are walked); roots
// that cannot be sampled are left out.
func FileSystems(roots []string) (n, countInodes int) {
	seen := map[[2]int32]bool{}
	for _, root := range roots {
		st, err := statFS(root)
		if err != nil || seen[st.id] {
			continue
		}
		seen[st.id] = true
		n++
		if st.totalInodes > 0 {
			countInodes++
		}
	}
	return n, countInodes
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
			return nil, fmt.Errorf("disk watch: %s: %w", root, err)
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

// usage returns the bytes and inodes consumed since the baseline, or an
// error when a file system can no longer be sampled. Walks are bounded:
// each stops once it has seen more than inodeLimit new entries, and runs
// at most once per ten times its last duration, except the last sample
// (final), which always walks.
func (b *diskBaseline) usage(inodeLimit int64, final bool) (bytes, inodes int64, err error) {
	for i, root := range b.roots {
		st, err := statFS(root)
		if err != nil {
			return 0, 0, fmt.Errorf("disk watch: %s: %w", root, err)
		}
		// Each file system counts what it lost, never what it gained:
		// space another writer frees on one must not pay for what the
		// sandbox writes on another.
		bytes += max(b.start[i].availBytes-st.availBytes, 0)
		if base, ok := b.walk[i]; ok {
			l := b.last[i]
			if !final && time.Since(l.at) < 10*l.took {
				continue
			}
			t := time.Now()
			n := countEntries(root, base+inodeLimit+1)
			b.last[i] = walkLog{at: t, took: time.Since(t)}
			inodes += n - base
			continue
		}
		inodes += max(b.start[i].freeInodes-st.freeInodes, 0)
	}
	return bytes, inodes, nil
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

// pidOf is what pid returns; 0 for a nil pid.
func pidOf(pid func() int) int {
	if pid == nil {
		return 0
	}
	return pid()
}
