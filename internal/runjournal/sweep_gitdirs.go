package runjournal

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moat-sandbox/moat/internal/gitguard"
)

// A run killed before Close (kill -9, the OOM killer, a reboot) leaves
// what its sandbox created inside a git directory that existed at its
// start: a commondir pointing at a repository it made, a config.worktree,
// info/attributes, rebase-merge/, a worktrees/ID or modules/NAME git
// directory, or the place itself turned into a bare-layout git directory
// (config, hooks/ at its top). The read-only binds cover only what
// existed, so a mount namespace does not stop these names from being
// created. The journal therefore records, at start, every git control
// path in each place (names only, bounded), and the sweep of a dead run
// sets aside every control path that is not among them, as the top-level
// names are.

// startControls lists the control paths of the start snapshot in place,
// relative to it, spending bytesLeft; cut is true when there are more
// than maxJournalControls or the bytes ran out (that place's list is then
// left out).
func (run *Run) startControls(place string, bytesLeft *int) (rel []string, cut bool) {
	if run.snap == nil {
		return nil, false
	}
	for _, p := range run.snap.Paths() {
		if r, err := filepath.Rel(place, p); err == nil && r != "." && !strings.HasPrefix(r, "..") {
			*bytesLeft -= len(r) + 8 // JSON quoting and a comma
			if len(rel) >= maxJournalControls || *bytesLeft < 0 {
				return nil, true
			}
			rel = append(rel, r)
		}
	}
	return rel, false
}

// maxJournalControlBytes bounds the bytes of control paths one journal
// records over all its places, well under maxJournalSize.
const maxJournalControlBytes = maxJournalSize / 2

// undoNewControls moves to the quarantine the control paths of pl that a
// dead run created (absent from its journal), outermost first; what lies
// inside a moved one goes with it. It runs after the top-level names, the
// new repositories and the placeholders are done. A journal that could
// not record the place's control paths is reported, not acted on: moving
// the user's own files would be worse.
func (run *Run) undoNewControls(root string, j *runJournal, pl journalPlace, budget *copyBudget) {
	if fi, err := os.Lstat(pl.Path); err != nil || !fi.IsDir() {
		return
	}
	if pl.Cut {
		run.refuse(Found{Kind: "control-path", Subject: pl.Path, Detail: crashedDetail(j) + fmt.Sprintf(
			"; it had more than %d git control paths, so those it created inside existing git directories were not looked for: check its .git directories before running git here", maxJournalControls)})
		return
	}
	if !pl.Recorded {
		return // a journal of an older moat
	}
	had := map[string]bool{}
	for _, r := range pl.Controls {
		had[r] = true
	}
	var found []string
	for _, p := range gitguard.Take([]string{pl.Path}).Paths() {
		r, err := filepath.Rel(pl.Path, p)
		if err != nil || r == "." || strings.HasPrefix(r, "..") || had[r] || run.inSweptRepo(p) {
			continue
		}
		found = append(found, r)
	}
	sort.Slice(found, func(a, b int) bool {
		if da, db := strings.Count(found[a], "/"), strings.Count(found[b], "/"); da != db {
			return da < db
		}
		return found[a] < found[b]
	})
	var moved []string
	for _, r := range found {
		inside := false
		for _, m := range moved {
			inside = inside || strings.HasPrefix(r, m+"/")
		}
		if inside {
			continue
		}
		p := filepath.Join(pl.Path, r)
		rep := Found{Kind: "control-path", Subject: p}
		dest, err := quarantine(root, j.ID, pl.Path, p, r, budget)
		if err != nil {
			rep.Detail = fmt.Sprintf("%s: a git control path it created; it could not be moved to the quarantine: %v; remove it before running git here", crashedDetail(j), err)
		} else {
			rep.Detail = crashedDetail(j) + "; a git control path it created, moved to " + dest
			moved = append(moved, r)
		}
		run.refuse(rep)
	}
}

// inSweptRepo reports whether p lies in a repository this sweep already
// neutralised (undoNewRepo): its inert config written back stays.
func (run *Run) inSweptRepo(p string) bool {
	for d := range run.sweptRepos {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}
