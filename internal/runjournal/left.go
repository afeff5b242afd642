package runjournal

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moat-sandbox/moat/internal/fileid"
)

// Left lists the names at the top of place that a run killed before
// Close created there, which the next sweep (Sweep, New) sets aside: what
// reading or explaining a policy, which sweeps nothing, must not take as
// the user's own. It reads the journals of dead runs and touches nothing.
// place is resolved; nil when no dead run recorded it.
func Left(place string) []string {
	root, err := StateRoot()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, r := range []string{root, legacyStateRoot()} {
		for _, j := range deadJournals(r) {
			for _, pl := range j.Places {
				if pl.Path != place {
					continue
				}
				for _, name := range createdAtTop(pl) {
					seen[name] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// deadJournals reads the journals in root whose owners are dead, as
// sweepJournals does, without claiming them.
func deadJournals(root string) []*runJournal {
	dir := filepath.Join(root, "journal")
	if privateDir(dir) != nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []*runJournal
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || !e.Type().IsRegular() {
			continue
		}
		b, ok := readOwnFile(filepath.Join(dir, name))
		if !ok {
			continue
		}
		j, err := parseJournal(b)
		if err != nil || j.ID+".json" != name || !ownerDead(j.Owner) {
			continue
		}
		out = append(out, j)
	}
	return out
}

// createdAtTop are the control names at the top of pl that were not there,
// as the same object, at the dead run's start (undoJournal's rule).
func createdAtTop(pl journalPlace) []string {
	present := map[journalEntry]bool{}
	for _, e := range pl.Present {
		present[e] = true
	}
	entries, err := os.ReadDir(pl.Path)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !isTopControlName(e.Name()) {
			continue
		}
		dev, ino, err := fileid.Identity(filepath.Join(pl.Path, e.Name()))
		if err != nil || present[journalEntry{Name: e.Name(), Dev: dev, Ino: ino}] {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}
