package quarantine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Dir is the quarantine's directory in the state directory root.
func Dir(root string) string { return filepath.Join(root, "quarantine") }

// MaxWalk bounds the files, directories and links List counts in one
// entry; past it the entry is listed as Truncated, its Size a lower bound.
const MaxWalk = 10000

// Entry is what one run set aside: STATE/quarantine/ID. The zero value is
// an empty entry.
type Entry struct {
	// ID is the run's sandbox id, the entry's name.
	ID string
	// Time is when the entry last changed (its directory's mtime): when
	// the run's Close, or the sweep after it died, moved something there.
	Time time.Time
	// Places are the places (working directory, writable grants) the
	// entries came from, by path.
	Places []Place
	// Size is the bytes of its regular files; Count its files,
	// directories and links.
	Size  int64
	Count int
	// Truncated says the walk stopped at MaxWalk (or a directory held
	// more names than were left of it): Size and Count are lower bounds.
	Truncated bool
	// Live says the run is still recorded as running (its journal is
	// there): prune and restore leave it alone.
	Live bool
}

// Place is one place of an entry. The zero value is an empty place.
type Place struct {
	// Path is the place's path on the host, as it was when the run
	// ended; Dir its directory in the entry.
	Path, Dir string
	// Files are the entries at its top that were set aside: the path
	// each had in the place, relative to it.
	Files []File
}

// File is one set-aside entry. The zero value is nothing.
type File struct {
	// Rel is its path relative to the place.
	Rel string
	// Mode is its type and permissions, not following a link.
	Mode fs.FileMode
	// Size is its bytes (a directory's: its regular files', counted
	// within MaxWalk).
	Size int64
}

// validID reports whether name is a sandbox id: 12 lowercase hex digits.
func validID(name string) bool {
	return len(name) == 12 && strings.Trim(name, "0123456789abcdef") == ""
}

// CheckID refuses an entry name that is not a sandbox id.
func CheckID(id string) error {
	if !validID(id) {
		return errors.New("not an entry of the quarantine (an entry is the 12 hex digits moat quarantine list shows)")
	}
	return nil
}

// List returns the quarantine's entries, oldest first. A missing
// quarantine is empty. Names that are not entries are skipped.
func List(root string) ([]Entry, error) {
	ents, _, err := readDirBounded(Dir(root), MaxEntries)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, d := range ents {
		if !validID(d.Name()) || !d.IsDir() { // IsDir from the dirent: a link is not one
			continue
		}
		e, err := Read(root, d.Name())
		if err != nil {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// MaxEntries bounds the names List reads in the quarantine's directory.
const MaxEntries = 100_000

// maxPlaces bounds the places Read reads in an entry (moat makes one per
// place a run could write).
const maxPlaces = 1000

// readDirBounded reads at most max entries of the directory dir, opened
// without following a link and without blocking, sorted by name, and says
// whether there were more: a sandbox can leave a million names in one
// directory, which os.ReadDir would read and sort whole.
func readDirBounded(dir string, max int) ([]fs.DirEntry, bool, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return nil, false, errors.New("not a directory")
	}
	var out []fs.DirEntry
	for len(out) < max {
		ents, err := f.ReadDir(min(256, max-len(out)))
		out = append(out, ents...)
		if err != nil || len(ents) == 0 {
			sortEntries(out)
			return out, false, nil
		}
	}
	ents, _ := f.ReadDir(1)
	sortEntries(out)
	return out, len(ents) > 0, nil
}

func sortEntries(ents []fs.DirEntry) {
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
}

// Read describes the entry id, walking at most MaxWalk of its files.
func Read(root, id string) (Entry, error) {
	if err := CheckID(id); err != nil {
		return Entry{}, err
	}
	dir := filepath.Join(Dir(root), id)
	fi, err := os.Lstat(dir)
	if err != nil {
		return Entry{}, err
	}
	if !fi.IsDir() {
		return Entry{}, errors.New("not a directory")
	}
	e := Entry{ID: id, Time: fi.ModTime(), Live: live(root, id)}
	budget := MaxWalk
	places, more, err := readDirBounded(dir, maxPlaces)
	if err != nil {
		return e, err
	}
	e.Truncated = more
	for _, pd := range places {
		if !pd.IsDir() {
			continue
		}
		path, ok := unescapePlace(pd.Name())
		if !ok {
			continue
		}
		p := Place{Path: path, Dir: filepath.Join(dir, pd.Name())}
		tops, more, err := readDirBounded(p.Dir, max(budget, 0))
		if err != nil {
			continue
		}
		if more {
			e.Truncated = true
		}
		for _, t := range tops {
			p.Files = append(p.Files, walkTop(p.Dir, t.Name(), &e, &budget)...)
		}
		e.Places = append(e.Places, p)
	}
	return e, nil
}

// walkTop describes the set-aside entries under top (a name at the top of
// a place's directory), spending budget. Close moves a control entry with
// the path it had inside the place (.git/hooks/pre-commit), so the files
// listed are the deepest paths that are not directories, and the
// directories that are empty or where the walk stopped.
func walkTop(placeDir, top string, e *Entry, budget *int) []File {
	var out []File
	var walk func(rel string)
	walk = func(rel string) {
		if *budget <= 0 {
			e.Truncated = true
			return
		}
		*budget--
		e.Count++
		fi, err := os.Lstat(filepath.Join(placeDir, rel))
		if err != nil {
			return
		}
		if !fi.IsDir() {
			if fi.Mode().IsRegular() {
				e.Size += fi.Size()
			}
			out = append(out, File{Rel: rel, Mode: fi.Mode(), Size: fi.Size()})
			return
		}
		ents, more, err := readDirBounded(filepath.Join(placeDir, rel), *budget)
		if more {
			e.Truncated = true
		}
		if err != nil || len(ents) == 0 && !more {
			out = append(out, File{Rel: rel, Mode: fi.Mode()})
			return
		}
		for _, c := range ents {
			walk(filepath.Join(rel, c.Name()))
		}
	}
	walk(top)
	return out
}

// live reports whether a journal of run id is in the state directory: the
// run has not finished its Close, or died and was not swept yet.
func live(root, id string) bool {
	_, err := os.Lstat(filepath.Join(root, "journal", id+".json"))
	return err == nil
}
