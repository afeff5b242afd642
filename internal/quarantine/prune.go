package quarantine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Limits bound the quarantine. The zero value bounds nothing.
type Limits struct {
	// MaxAge removes entries that last changed longer ago; 0 keeps any
	// age.
	MaxAge time.Duration
	// MaxBytes removes the oldest entries until the rest hold at most this
	// many bytes; 0 keeps any size.
	MaxBytes int64
	// All removes every entry whose run has finished, whatever its age
	// and size; false applies MaxAge and MaxBytes.
	All bool
}

// DefaultLimits are what Close keeps: 30 days, 1 GiB.
var DefaultLimits = Limits{MaxAge: 30 * 24 * time.Hour, MaxBytes: 1 << 30}

// Prune removes the entries past l, oldest first, and returns them. An
// entry whose run is still live is never removed. Removing follows no
// link (os.RemoveAll unlinks links themselves).
func Prune(root string, l Limits, now time.Time) ([]Entry, error) {
	ents, err := List(root)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, e := range ents {
		total += e.Size
	}
	var removed []Entry
	var errs []error
	for _, e := range ents { // oldest first
		old := l.MaxAge > 0 && now.Sub(e.Time) > l.MaxAge
		big := l.MaxBytes > 0 && total > l.MaxBytes
		if e.Live || !old && !big && !l.All {
			continue
		}
		if err := Remove(root, e.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		total -= e.Size
		removed = append(removed, e)
	}
	return removed, errors.Join(errs...)
}

// Remove deletes the entry id whole.
func Remove(root, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if live(root, id) {
		return fmt.Errorf("entry %s: its run has not finished", id)
	}
	if err := os.RemoveAll(filepath.Join(Dir(root), id)); err != nil {
		return fmt.Errorf("entry %s: %w", id, err)
	}
	return nil
}

// autoPruneEvery spaces the prunes AutoPrune runs.
const autoPruneEvery = time.Hour

// stampName is the file in the quarantine whose mtime says when
// AutoPrune last ran.
const stampName = ".pruned"

// AutoPrune prunes the quarantine to DefaultLimits at most once an hour:
// it costs one stat when the last prune is recent, nothing when there is no
// quarantine. For Close, never for the start of a run.
func AutoPrune(root string, now time.Time) error {
	dir := Dir(root)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	stamp := filepath.Join(dir, stampName)
	if fi, err := os.Lstat(stamp); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) < autoPruneEvery && !fi.ModTime().After(now) {
		return nil
	}
	f, err := os.OpenFile(stamp, os.O_WRONLY|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	_ = os.Chtimes(stamp, now, now)
	_, err = Prune(root, DefaultLimits, now)
	return err
}
