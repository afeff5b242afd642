package hostinput

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/moat-sandbox/moat/internal/paths"
)

// Place is a directory a sandbox can write. The zero value is no place.
type Place struct {
	// What names it in messages: "the working directory".
	What string
	// Path is its absolute path; links in it are followed when it is
	// compared.
	Path string
	// UserWritable narrows the place to what the user may change: a file
	// counts only when the user may write it or a directory on its way
	// (isolation permissive, whose sandbox writes what the user can, is
	// the place "/" so narrowed). False counts everything in Path.
	UserWritable bool
	// Except are paths inside Path the sandbox cannot write (the
	// protected paths at isolation permissive). Nil excepts nothing.
	Except []string
}

// Store is the user's record of places that sandboxes could write and of
// the files the user trusts, kept in moat's per-user state directory. The
// zero value records nothing and knows no place and no trusted file.
type Store struct {
	// Dir is moat's state directory: 0700, the user's own, hidden from
	// every sandbox.
	Dir string
}

// placesName is the directory of place markers under Store.Dir; each
// marker is named by the SHA-256 of the place's path and holds the path.
const placesName = "places"

// maxPlaceMarker bounds what a marker may hold: one path.
const maxPlaceMarker = 4096

// markerName is the marker file of the place p.
func markerName(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:])
}

// RecordPlaces records each place (absolute; resolved here) as one that a
// sandbox could write, so that a later read of a file in it is refused
// unless trusted. A place recorded already costs one lstat. It fails
// closed: a place that cannot be recorded is an error, and the run must
// not start.
func (s Store) RecordPlaces(places []string) error {
	if s.Dir == "" || len(places) == 0 {
		return nil
	}
	dir := filepath.Join(s.Dir, placesName)
	made := false
	for _, p := range places {
		p = resolvePlace(p)
		m := filepath.Join(dir, markerName(p))
		if _, err := os.Lstat(m); err == nil {
			continue
		}
		if !made {
			if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("journal of writable places: %w", err)
			}
			if err := privateDir(dir); err != nil {
				return fmt.Errorf("journal of writable places %q: %w", dir, err)
			}
			made = true
		}
		if err := writeMarker(m, p); err != nil {
			return fmt.Errorf("journal of writable places: record %q: %w", p, err)
		}
	}
	return nil
}

// writeMarker writes the marker m holding p, atomically.
func writeMarker(m, p string) error {
	tmp := m + ".new-" + randomSuffix()
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(p)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, m)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// resolvePlace returns p absolute, clean, with every link that exists
// followed.
func resolvePlace(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// recorded reports whether p (absolute, clean) is a recorded place. An
// error means the journal cannot be read: the caller fails closed.
func (s Store) recorded(p string) (bool, error) {
	if s.Dir == "" {
		return false, nil
	}
	m := filepath.Join(s.Dir, placesName, markerName(p))
	b, err := readSmallOwn(m, maxPlaceMarker)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("journal of writable places: %w", err)
	}
	return string(b) == p, nil
}

// PastPlace returns the recorded place that holds p (absolute, clean), p
// itself or its nearest ancestor, or "".
func (s Store) PastPlace(p string) (string, error) { return s.pastPlaceBut(p, "") }

// pastPlaceBut is PastPlace not counting the place skip.
func (s Store) pastPlaceBut(p, skip string) (string, error) {
	for c := p; ; c = filepath.Dir(c) {
		if c == skip {
			if c == filepath.Dir(c) {
				return "", nil
			}
			continue
		}
		ok, err := s.recorded(c)
		if err != nil {
			return "", err
		}
		if ok {
			return c, nil
		}
		if c == filepath.Dir(c) {
			return "", nil
		}
	}
}

// Places lists the recorded places, sorted.
func (s Store) Places() ([]string, error) {
	if s.Dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(filepath.Join(s.Dir, placesName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal of writable places: %w", err)
	}
	var out []string
	for _, e := range entries {
		if len(e.Name()) != 64 {
			continue
		}
		b, err := readSmallOwn(filepath.Join(s.Dir, placesName, e.Name()), maxPlaceMarker)
		if err == nil && markerName(string(b)) == e.Name() {
			out = append(out, string(b))
		}
	}
	sort.Strings(out)
	return out, nil
}

// ForgetPlace removes the record of the place p: the user asserts that
// nothing a sandbox wrote there remains. It reports whether there was one.
func (s Store) ForgetPlace(p string) (bool, error) {
	p = resolvePlace(p)
	ok, err := s.recorded(p)
	if err != nil || !ok {
		return false, err
	}
	if err := os.Remove(filepath.Join(s.Dir, placesName, markerName(p))); err != nil {
		return false, fmt.Errorf("journal of writable places: %w", err)
	}
	return true, nil
}

// readSmallOwn reads the regular file p, the user's own and private, not
// through a link, up to max bytes.
func readSmallOwn(p string, max int64) ([]byte, error) {
	f, err := openNoFollow(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
		return nil, fmt.Errorf("%q: not a private regular file of yours", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%q: larger than %d bytes", p, max)
	}
	return b, nil
}

// within returns the place of places that holds p (absolute, clean, links
// followed), or ok false. A place is compared by its resolved path and,
// for bind mounts and other second names, by the identity of p's
// ancestors.
func within(p string, places []Place) (Place, bool) {
	ids := map[fileID]Place{}
	for _, pl := range places {
		if pl.UserWritable && !userMayChange(p) {
			continue
		}
		if underAny(p, pl.Except) {
			continue
		}
		r := resolvePlace(pl.Path)
		if paths.Under(p, r) {
			return pl, true
		}
		if id, ok := idOf(r); ok {
			ids[id] = pl
		}
	}
	if len(ids) == 0 {
		return Place{}, false
	}
	for c := p; ; c = filepath.Dir(c) {
		if id, ok := idOf(c); ok {
			if pl, hit := ids[id]; hit {
				return pl, true
			}
		}
		if c == filepath.Dir(c) {
			return Place{}, false
		}
	}
}

// userMayChange reports whether the user may write p or a directory on
// its way, and so replace it.
func userMayChange(p string) bool {
	start := p
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		start = filepath.Dir(p) // a link is changed through its directory
	}
	for c := start; ; c = filepath.Dir(c) {
		if mayWrite(c) {
			return true
		}
		if c == filepath.Dir(c) {
			return false
		}
	}
}

// underAny reports whether p is one of roots, resolved, or lies under one.
func underAny(p string, roots []string) bool {
	for _, r := range roots {
		r = resolvePlace(r)
		if paths.Under(p, r) {
			return true
		}
	}
	return false
}
