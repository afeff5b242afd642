package quarantine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/moat-sandbox/moat/internal/hostiletree"
)

// Limits bound the quarantine. The zero value bounds nothing, and removes
// within DefaultBudget.
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
	// Budget bounds the work of one prune's removal, in directory
	// entries (files, directories, links); what is left waits in the
	// trash for the next prune. 0 means DefaultBudget.
	Budget int
}

// DefaultBudget is the removal work of one prune: 100,000 entries.
const DefaultBudget = 100_000

// DefaultLimits are what Close keeps: 30 days, 1 GiB.
var DefaultLimits = Limits{MaxAge: 30 * 24 * time.Hour, MaxBytes: 1 << 30}

// trashName is the directory of the quarantine where removed entries wait
// to be emptied; not an entry (List skips it).
const trashName = ".trash"

// PruneResult says what a prune did. The zero value is a prune that
// removed nothing and left an empty trash.
type PruneResult struct {
	// Removed are the entries taken out of the quarantine, oldest first.
	Removed []Entry
	// Unfinished says the work budget ran out before the trash (removed
	// entries, this prune's and earlier ones') was empty: the next prune
	// goes on.
	Unfinished bool
}

// Prune removes the entries past l, oldest first, and returns them. An
// entry whose run is still live is never removed. A removed entry is
// moved into the quarantine's trash at once (one rename: list no longer
// shows it), and the trash is then emptied within l.Budget entries, going
// on from where an earlier prune stopped. Removing copes with any tree a
// sandbox could make (see package hostiletree): directories it made
// unwritable or unsearchable, chains deeper than PATH_MAX, FIFOs, sockets;
// it follows no link.
func Prune(root string, l Limits, now time.Time) (PruneResult, error) {
	var res PruneResult
	ents, err := List(root)
	if err != nil {
		return res, err
	}
	var total int64
	for _, e := range ents {
		total += e.Size
	}
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
		res.Removed = append(res.Removed, e)
	}
	unfinished, err := EmptyTrash(root, l.Budget)
	res.Unfinished = unfinished
	if err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

// Remove takes the entry id out of the quarantine: it is moved whole into
// the trash, which [EmptyTrash] (and every prune) empties.
func Remove(root, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if live(root, id) {
		return fmt.Errorf("entry %s: its run has not finished", id)
	}
	if err := hostiletree.Retire(filepath.Join(Dir(root), id), filepath.Join(Dir(root), trashName), id); err != nil {
		return fmt.Errorf("entry %s: %w", id, err)
	}
	return nil
}

// EmptyTrash removes what the quarantine's trash holds, within budget
// directory entries (0 means DefaultBudget), and says whether the budget
// ran out first. What it cannot remove stays, named in the error.
func EmptyTrash(root string, budget int) (unfinished bool, err error) {
	if budget <= 0 {
		budget = DefaultBudget
	}
	trash := filepath.Join(Dir(root), trashName)
	switch err := hostiletree.EmptyTrash(trash, &budget); {
	case errors.Is(err, hostiletree.ErrBudget):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("trash: %w", err)
	}
	_ = os.Remove(trash) // empty: gone, so that AutoPrune finds nothing to go on with
	return false, nil
}

// TrashPending reports whether the quarantine's trash holds something a
// prune has still to remove.
func TrashPending(root string) bool {
	f, err := os.Open(filepath.Join(Dir(root), trashName))
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) > 0
}

// autoPruneEvery spaces the prunes AutoPrune runs.
const autoPruneEvery = time.Hour

// stampName is the file in the quarantine whose mtime says when
// AutoPrune last ran.
const stampName = ".pruned"

// AutoPrune prunes the quarantine to DefaultLimits at most once an hour,
// and goes on emptying the trash at every call while it holds something:
// it costs two stats when the last prune is recent, nothing when there is
// no quarantine. For Close, never for the start of a run.
func AutoPrune(root string, now time.Time) error {
	dir := Dir(root)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	stamp := filepath.Join(dir, stampName)
	if fi, err := os.Lstat(stamp); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) < autoPruneEvery && !fi.ModTime().After(now) {
		// A removal the last prune's budget left unfinished goes on
		// at every Close, not only hourly: it costs one stat when
		// there is none.
		if _, err := os.Lstat(filepath.Join(dir, trashName)); err == nil {
			_, err = EmptyTrash(root, DefaultBudget)
			return err
		}
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
