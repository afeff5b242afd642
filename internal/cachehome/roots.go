package cachehome

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
)

// rootsName is the file in Records that lists every stores root a run
// used: a user whose runs see different XDG_CACHE_HOME values has stores
// in each, and every sandbox's view must hide them all, not only the one
// its own environment names.
const rootsName = "roots"

// maxRoots bounds the roots recorded; maxRootsFile bounds the file.
const (
	maxRoots     = 256
	maxRootsFile = 64 << 10
)

// recordRoot adds root to the roots recorded in records, unless it is
// there already or the record is full. One line, appended with one write:
// two runs adding at once each add theirs.
func recordRoot(records, root string) error {
	have, err := Roots(records)
	if err != nil {
		return err
	}
	for _, r := range have {
		if r == root {
			return nil
		}
	}
	if len(have) >= maxRoots || strings.ContainsRune(root, '\n') {
		return fmt.Errorf("cannot record %q: full, or not one line", root)
	}
	f, err := appendNoFollow(filepath.Join(records, rootsName))
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(root + "\n"))
	return errors.Join(werr, f.Close())
}

// Roots returns the stores roots recorded in records (a [Layout]'s
// Records): absolute, clean, each once, at most 256. A file that is
// missing lists none; one that is not this user's regular file, or too
// large, is an error.
func Roots(records string) ([]string, error) {
	f, err := openNoFollow(filepath.Join(records, rootsName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || !ownedByMe(fi) || fi.Size() > maxRootsFile {
		return nil, errors.New("roots record: not a small file of this user's")
	}
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(f, maxRootsFile))
	for sc.Scan() && len(out) < maxRoots {
		r := sc.Text()
		if !filepath.IsAbs(r) || filepath.Clean(r) != r || seen[r] {
			continue
		}
		seen[r] = true
		out = append(out, r)
	}
	return out, sc.Err()
}
