package fspattern

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/moat-sandbox/moat/internal/paths"
)

// hardLinks finds the other names of the denied regular files, and of the
// regular files inside denied directories, that have more than one (a
// link count above 1): Landlock rules and masks hold on the names moat
// knows, so another name beside the denied one would read the same
// content. Only when some denied file has such a count does it stat the
// files of Root; every other name found there is denied, and a file with
// names left unfound (outside Root, or in a directory that cannot be
// read) goes to HardLinkGaps.
func (m *materializer) hardLinks() error {
	type want struct {
		path string
		left uint64
	}
	byKey := map[fileKey]*want{}
	add := func(p string, fi os.FileInfo) {
		if !fi.Mode().IsRegular() {
			return
		}
		k, n, ok := linkInfo(fi)
		if !ok || n < 2 {
			return
		}
		if _, dup := byKey[k]; !dup {
			byKey[k] = &want{path: p, left: n - 1}
		}
	}
	for _, p := range m.linkCand {
		if fi, err := os.Lstat(p); err == nil {
			add(p, fi)
		}
	}
	for _, d := range m.deniedDirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() {
				return nil
			}
			if fi, err := e.Info(); err == nil {
				add(p, fi)
			}
			return nil
		})
	}
	if len(byKey) == 0 {
		return nil
	}
	denied := map[string]bool{}
	for _, d := range m.deniedDirs {
		denied[d] = true
	}
	insideDenied := func(p string) bool {
		for d := filepath.Dir(p); paths.Under(d, m.in.Root) && d != m.in.Root; d = filepath.Dir(d) {
			if denied[d] {
				return true
			}
		}
		return false
	}
	left := len(byKey)
	_ = filepath.WalkDir(m.in.Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || left == 0 {
			if left == 0 {
				return filepath.SkipAll
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		k, _, ok := linkInfo(fi)
		if !ok {
			return nil
		}
		w := byKey[k]
		if w == nil || w.left == 0 || p == w.path {
			return nil
		}
		w.left--
		if w.left == 0 {
			left--
		}
		if !insideDenied(p) {
			m.res.Deny = append(m.res.Deny, p)
		}
		return nil
	})
	for _, w := range byKey {
		if w.left > 0 {
			m.res.HardLinkGaps = append(m.res.HardLinkGaps, quoteOdd(w.path)+" ("+strconv.FormatUint(w.left, 10)+" more)")
		}
	}
	return nil
}
