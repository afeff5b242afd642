package gitguard

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// A path whose content could not be compared (too large to hash, past the
// byte budget, unreadable, a control directory too large to list) is
// compared by its stat fingerprint instead: device, inode, mode, size,
// mtime and ctime. A sandbox can set mtime (utimensat) but not ctime, and
// every write, chmod, rename, link or unlink sets ctime to now, so an
// equal fingerprint means the inode was not touched. Only a fingerprint
// whose ctime lies well before the start snapshot counts: a change in the
// same clock tick as the snapshot could keep ctime equal.

// fingerprint is an inode's identity and its change stamps.
type fingerprint struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime int64 // nanoseconds
}

// printMargin is how long before the start snapshot a fingerprint's ctime
// must lie for the fingerprint to stand for the content; tests lower it.
var printMargin = time.Second

// maxPrintEntries bounds the entries of one control directory that are
// fingerprinted one by one when it is too large to compare by content.
const maxPrintEntries = 1 << 16

// settled reports whether st's fingerprint can stand for its content in
// a snapshot taken at taken.
func (st *state) settled(taken time.Time) bool {
	return st.printed && st.print.ctime < taken.Add(-printMargin).UnixNano() &&
		(!st.kind.IsDir() || st.treePrinted)
}

// samePrint reports whether b, before the run, and a, after it, carry the
// same fingerprints (and, for a directory, the same fingerprints of
// everything in it).
func samePrint(b, a *state) bool {
	return b.printed && a.printed && b.print == a.print &&
		b.treePrinted == a.treePrinted && b.treeSum == a.treeSum
}

// printTree fingerprints everything below the directory p, at most
// maxPrintEntries entries and 5 levels, spending the name budget, and
// reports the digest of the sorted (path, fingerprint) list; ok is false
// when it could not be done in full (then nothing stands for the content).
func (sc *scanner) printTree(p string) (sum [sha256.Size]byte, ok bool) {
	var lines []string
	var walk func(dir, rel string, level int) bool
	walk = func(dir, rel string, level int) bool {
		if level > 5 {
			return false
		}
		f, err := openDirEntries(dir)
		if err != nil {
			return false
		}
		defer f.Close()
		for {
			names, err := f.Readdirnames(1024)
			if !sc.spend(sc.s.placeOf(p), len(names)) {
				return false
			}
			for _, n := range names {
				if len(lines) >= maxPrintEntries {
					return false
				}
				fi, err := os.Lstat(filepath.Join(dir, n))
				if err != nil {
					return false
				}
				fp, ok := statPrint(fi)
				if !ok || fp.ctime >= sc.s.taken.Add(-printMargin).UnixNano() && !sc.repair {
					return false
				}
				var b [48]byte
				binary.LittleEndian.PutUint64(b[0:], fp.dev)
				binary.LittleEndian.PutUint64(b[8:], fp.ino)
				binary.LittleEndian.PutUint64(b[16:], uint64(fp.mode))
				binary.LittleEndian.PutUint64(b[24:], uint64(fp.size))
				binary.LittleEndian.PutUint64(b[32:], uint64(fp.mtime))
				binary.LittleEndian.PutUint64(b[40:], uint64(fp.ctime))
				lines = append(lines, rel+"/"+n+"\x00"+string(b[:]))
				if fi.IsDir() && !walk(filepath.Join(dir, n), rel+"/"+n, level+1) {
					return false
				}
			}
			if err == io.EOF {
				return true
			}
			if err != nil {
				return false
			}
		}
	}
	if !walk(p, ".", 0) {
		return sum, false
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(l)))
		h.Write(n[:])
		h.Write([]byte(l))
	}
	copy(sum[:], h.Sum(nil))
	return sum, true
}
