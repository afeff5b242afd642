package cachehome

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/moat-sandbox/moat/internal/hostiletree"
)

// Bounds are the limits a prune keeps the stores to. A zero field means
// its value in [DefaultBounds].
type Bounds struct {
	// MaxAge removes a store unused for longer.
	MaxAge time.Duration
	// MaxBytes bounds all stores together; the least recently used go
	// first.
	MaxBytes int64
	// Budget bounds the work of one prune, and of one measure, in
	// directory entries; what is left waits for the next.
	Budget int
}

// DefaultBounds are 30 days, 10 GiB and 50,000 entries.
var DefaultBounds = Bounds{MaxAge: 30 * 24 * time.Hour, MaxBytes: 10 << 30, Budget: 50_000}

// MeasureBudget is how many directory entries [Lease.Close] measures by
// default: a large Go module cache holds a few hundred thousand files,
// measured at about half a second per 200,000. A store larger than that
// measures partial, and [Prune] retires it.
const MeasureBudget = 1_000_000

func (b Bounds) withDefaults() Bounds {
	if b.MaxAge <= 0 {
		b.MaxAge = DefaultBounds.MaxAge
	}
	if b.MaxBytes <= 0 {
		b.MaxBytes = DefaultBounds.MaxBytes
	}
	if b.Budget <= 0 {
		b.Budget = DefaultBounds.Budget
	}
	return b
}

// PruneResult says what a prune did. The zero value is a prune that did
// nothing.
type PruneResult struct {
	// Retired are the keys whose stores were moved to the trash.
	Retired []string
	// Unfinished says the budget ran out before the trash was empty.
	Unfinished bool
}

// Prune retires the stores unused for longer than b.MaxAge, then the least
// recently used until the rest fit b.MaxBytes, stores whose size is not
// known in full (a measure that ran out of budget or could not see
// everything: a store shaped to hide its size counts as over the bound,
// never as small), and stores with no record;
// a store some run holds is never touched. A retired store is moved into
// the trash at once (so no run can take it up again half removed), and
// the trash is emptied within b.Budget entries, going on from where an
// earlier prune stopped. It is meant for Close, never for the start path.
func Prune(l Layout, b Bounds, now time.Time) (PruneResult, error) {
	var res PruneResult
	if !filepath.IsAbs(l.Root) || !filepath.IsAbs(l.Records) {
		return res, errors.New("cache homes: no place for the stores")
	}
	if !Supported {
		return res, nil
	}
	b = b.withDefaults()
	if _, err := os.Lstat(l.Root); errors.Is(err, os.ErrNotExist) {
		return res, nil
	}
	keys, err := listRecords(l.Records)
	if err != nil {
		return res, fmt.Errorf("cache homes: records: %w", err)
	}
	var recs []Record
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
		r, err := readRecord(l.Records, k)
		if err != nil {
			r = Record{Key: k} // unreadable: oldest of all
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].LastUse.After(recs[j].LastUse) })
	var total int64
	var firstErr error
	note := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, r := range recs {
		old := now.Sub(r.LastUse) > b.MaxAge
		total += r.Size
		if !old && !r.SizePartial && total <= b.MaxBytes {
			continue
		}
		ok, err := retire(l, r.Key, true)
		note(err)
		if ok {
			res.Retired = append(res.Retired, r.Key)
			total -= r.Size
		}
	}
	// Stores with no record: a crash between a record's removal and the
	// store's, or a store made by hand.
	ents, err := os.ReadDir(l.Root)
	note(err)
	for _, e := range ents {
		if k := e.Name(); validKey(k) && !known[k] {
			ok, err := retire(l, k, false)
			note(err)
			if ok {
				res.Retired = append(res.Retired, k)
			}
		}
	}
	budget := b.Budget
	switch err := hostiletree.EmptyTrash(filepath.Join(l.Root, trashName), &budget); {
	case errors.Is(err, hostiletree.ErrBudget):
		res.Unfinished = true
	case err != nil:
		note(fmt.Errorf("cache homes: trash: %w", err))
	}
	return res, firstErr
}

// retire moves the store of key into the trash and forgets its record,
// unless a run holds it (false, nil). hadRecord says a record was seen;
// without one, a record written since (a run that just took the key)
// keeps the store.
func retire(l Layout, key string, hadRecord bool) (bool, error) {
	lk, err := tryLock(filepath.Join(l.Records, key+lockSuffix))
	if err != nil || lk == nil {
		return false, err
	}
	defer lk.removeAndRelease()
	if !hadRecord {
		if _, err := os.Lstat(filepath.Join(l.Records, key+recordSuffix)); err == nil {
			return false, nil
		}
	}
	if err := hostiletree.Retire(filepath.Join(l.Root, key), filepath.Join(l.Root, trashName), key); err != nil {
		return false, fmt.Errorf("cache homes: retire %s: %w", key, err)
	}
	if err := os.Remove(filepath.Join(l.Records, key+recordSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return true, fmt.Errorf("cache homes: record of %s: %w", key, err)
	}
	return true, nil
}
