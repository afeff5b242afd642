package gitguard

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
)

// The scan's bounds. A snapshot reads what a sandbox wrote, so each kind
// of work it does has its own bound, and work done once is remembered:
//
//   - names: directory entries read, over all places (a getdents name
//     and type each, never a stat). Only a control name found among them
//     costs more, so hard links, which cost a sandbox no inode, buy it
//     nothing but names;
//   - dirs: directories opened, over all places;
//   - hashed bytes: the content hashed over the whole snapshot; an inode
//     seen before (another hard link to it) is not read again;
//   - includes: the files followed from include.path and includeIf.*.path,
//     over the whole snapshot, each at most once, at most
//     maxIncludeDepth levels deep.
//
// Past a bound nothing is taken for clean: a directory not read is
// reported as not checked (the check after a run reads as many
// directories as the start saw plus the sandbox's inode limit, so a run
// cannot make more than it reads: SetCreatable); a config whose includes
// were not all followed is treated as changed, so Close sets it aside;
// and a file not hashed (too large, past the byte budget, unreadable) or
// a control directory too large to list is compared by its stat
// fingerprint (fingerprint.go), never taken for clean on less.
const (
	// MaxEntries bounds the directory entries one [Take] reads. A name
	// costs a getdents record and a compare (about 0.2 µs): 16 Mi names
	// is a few seconds, and a sandbox needs some 600 MiB of directory
	// blocks to reach it, hard links or not.
	MaxEntries = 16 << 20
	// MaxDirs bounds the directories one [Take] opens.
	MaxDirs = 1 << 19
	// MaxHashBytes bounds the bytes one [Take] hashes.
	MaxHashBytes = 64 << 20
	// MaxIncludes bounds the include files one [Take] follows.
	MaxIncludes = 256
)

// The bounds in force; tests lower them.
var (
	entryBudget   = MaxEntries
	dirBudget     = MaxDirs
	hashBudget    = int64(MaxHashBytes)
	includeBudget = MaxIncludes
)

// maxConfig bounds the config file kept to follow its includes and to
// write its inert part back; a larger one is treated as changed.
const maxConfig = 1 << 20

// fileID names one inode.
type fileID struct{ dev, ino uint64 }

// hashed is what reading one inode gave.
type hashed struct {
	size    int64
	sum     [sha256.Size]byte
	content []byte
	kept    bool
}

// spendDir takes one directory from the budget; false once it is spent.
func (sc *scanner) spendDir(place string) bool {
	sc.dirs--
	if sc.dirs < 0 {
		sc.cutDirs(place)
		return false
	}
	return true
}

// cutDirs reports the directory budget spent, saying, after a run, which
// flag bounds the directories a sandbox can make.
func (sc *scanner) cutDirs(place string) {
	why := fmt.Sprintf("more than %d directories", sc.dirLimit)
	if sc.repair {
		why += fmt.Sprintf(" (a run makes at most --disk-inodes directories; with --disk-inodes at most %d, Close checks every one)", max(int64(sc.dirLimit-sc.s.startDirs), 0))
	}
	sc.cut(place, why)
}

// maxAfterDirs bounds the directories the check after a run opens, however
// large the sandbox's inode limit: a queue entry is a path, so this bounds
// the memory of the walk too.
const maxAfterDirs = 2 << 20

// SetCreatable tells s how many files and directories a run may create
// (the sandbox's inode limit, --disk-inodes); the check after the run
// then opens as many directories as s saw plus that many, so that a
// sandbox cannot make more directories than the check reads. Zero (the
// zero value) or less means no bound is known: the check keeps MaxDirs.
func (s *Snapshot) SetCreatable(n int64) {
	if s != nil {
		s.creatable = n
	}
}

// afterDirs is the directory budget of the check after the run.
func (s *Snapshot) afterDirs() int {
	if s.creatable <= 0 || s.startCut {
		return dirBudget
	}
	n := int64(maxAfterDirs)
	if s.creatable < maxAfterDirs {
		n = min(int64(s.startDirs)+s.creatable+1, maxAfterDirs)
	}
	return max(int(n), dirBudget)
}

// spend takes n names from the budget; false once it is spent.
func (sc *scanner) spend(place string, n int) bool {
	sc.budget -= n
	if sc.budget < 0 {
		sc.cut(place, fmt.Sprintf("more than %d entries", entryBudget))
		return false
	}
	return true
}

func (sc *scanner) cut(place, why string) {
	if _, ok := sc.s.incomplete[place]; !ok {
		sc.s.incomplete[place] = why + ": what lies beyond them was not checked for repositories"
	}
}

// hashFile fills st from the regular file p: its hash, and its content
// when it is small enough to restore (keep bytes; maxConfig for a
// config). An inode already read is not read again; a file larger than
// maxHash, or past the snapshot's byte budget, is marked unsure.
func (sc *scanner) hashFile(p string, fi os.FileInfo, st *state, keepMax int) {
	key, haveKey := inodeKey(fi)
	if haveKey {
		if h, ok := sc.hashed[key]; ok && h.size == fi.Size() && (h.kept || fi.Size() > int64(keepMax)) {
			st.sum, st.content, st.kept = h.sum, h.content, h.kept
			return
		}
	}
	if fi.Size() > maxHash {
		st.unsure = fmt.Sprintf("larger than %d bytes, so not compared", maxHash)
		st.rescuable = true
		return
	}
	if fi.Size() > sc.hashLeft {
		st.unsure = fmt.Sprintf("past the scan's budget of %d bytes hashed, so not compared", hashBudget)
		st.rescuable = true
		return
	}
	f, err := openNoFollow(p)
	if err != nil {
		st.unsure = "could not be read, so not compared"
		st.rescuable = true
		return
	}
	defer f.Close()
	h := sha256.New()
	keep := limitedBuffer{max: keepMax}
	n, err := io.Copy(io.MultiWriter(h, &keep), io.LimitReader(f, fi.Size()+1))
	sc.hashLeft -= n
	if err != nil || n != fi.Size() {
		st.unsure = "changed while it was read, so not compared"
		return
	}
	copy(st.sum[:], h.Sum(nil))
	if !keep.over {
		st.content, st.kept = keep.b, true
	}
	if haveKey {
		sc.hashed[key] = &hashed{size: fi.Size(), sum: st.sum, content: st.content, kept: st.kept}
	}
}
