package runjournal

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/moat-sandbox/moat/internal/gitguard"
)

// sweepCrashed undoes the runs whose journal's owner is dead, and
// reports what it and every earlier Sweep of this process found; Open
// calls it first, before the git snapshot, so that nothing a dead run
// planted counts as present at this run's start.
func (run *Run) sweepCrashed() {
	Sweep() // what it finds waits in crashPending
	crashPending.Lock()
	earlier := crashPending.list
	crashPending.list = nil
	crashPending.Unlock()
	for _, f := range earlier {
		run.refuse(f)
	}
}

// crashPending holds what a sweep found, for the next Open of this
// process to report.
var crashPending struct {
	sync.Mutex
	list []Found
}

// Sweep undoes the runs of this user whose moat was killed before Close:
// what their sandboxes created at the top of a writable place (.git,
// .agents, .pi, .moat-*, .heimdall-*) or inside its git directories is
// moved to the quarantine of moat's state directory, their placeholders
// are removed, and what it did is returned, one "control-path" Found
// each. Open calls it first; a front end calls it also before it reads,
// for a run, anything a sandbox may have written in a place, such as the
// policy fragments of a cwd. What it returns is reported again by the
// next Open of this process. Reading a policy alone never sweeps.
func Sweep() []Found {
	root, err := StateRoot()
	if err != nil {
		return nil
	}
	var found []Found
	seen := map[Found]bool{}
	sweeper := &Run{id: newID(), hooks: Hooks{Refuse: func(f Found) {
		if !seen[f] {
			seen[f] = true
			found = append(found, f)
		}
	}}}
	sweeper.sweepJournals(root)
	if legacy := legacyStateRoot(); legacy != root && privateDir(legacy) == nil {
		// Runs of an earlier moat kept their journals there; theirs are
		// undone where they were recorded.
		sweeper.sweepJournals(legacy)
	}
	if len(found) > 0 {
		crashPending.Lock()
		crashPending.list = append(crashPending.list, found...)
		crashPending.Unlock()
	}
	return found
}

// newID is a sweeper's id, as a sandbox's: 12 hexadecimal digits.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// sweepJournals undoes the runs whose journal's owner is dead.
func (run *Run) sweepJournals(root string) {
	dir := filepath.Join(root, "journal")
	if privateDir(dir) != nil {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, name)
		b, ok := readOwnFile(p)
		if !ok {
			continue
		}
		j, err := parseJournal(b)
		if err != nil || j.ID+".json" != name || !ownerDead(j.Owner) {
			continue
		}
		// Claimed by a rename, so that two runs sweeping at once do not
		// both undo it.
		claim := p + ".sweep-" + run.id
		if os.Rename(p, claim) != nil {
			continue
		}
		run.undoJournal(root, j)
		_ = os.Remove(claim)
	}
}

// crashedDetail opens the Detail of what a crashed run left.
func crashedDetail(j *runJournal) string {
	return fmt.Sprintf("left by the run of sandbox %s (process %d), which ended without closing (killed or crashed)", j.ID, j.Owner.Pid)
}

// undoJournal quarantines what a dead run created at the top of its
// places and removes its placeholders.
func (run *Run) undoJournal(root string, j *runJournal) {
	budget := newCopyBudget()
	for _, pl := range j.Places {
		fi, err := os.Lstat(pl.Path)
		if err != nil || !fi.IsDir() {
			continue
		}
		// What existed at the dead run's start is never touched.
		for _, name := range createdAtTop(pl) { // left.go
			p := filepath.Join(pl.Path, name)
			if name == ".git" && run.undoNewRepo(root, j, pl.Path, p, budget) {
				continue
			}
			if i := strings.Index(name, ".moat-quarantine-"); i > 0 {
				name = name[:i] // set aside in the place by that run's Close
			}
			dest, err := quarantine(root, j.ID, pl.Path, p, name, budget)
			r := Found{Kind: "control-path", Subject: filepath.Join(pl.Path, name)}
			if err != nil {
				r.Detail = fmt.Sprintf("%s, and could not be moved to the quarantine: %v; remove it before running moat or git here", crashedDetail(j), err)
			} else {
				r.Detail = crashedDetail(j) + "; moved to " + dest
			}
			run.refuse(r)
		}
	}
	for _, pl := range j.Places {
		run.undoNestedRepos(root, j, pl, budget)
	}
	for _, pl := range j.Places {
		// The hooks/ and config placeholders that run's engine made in
		// the repositories of the place (each marked with its owner).
		seen := map[string]bool{}
		for _, p := range gitguard.Take([]string{pl.Path}).Paths() {
			g := filepath.Dir(p)
			if b := filepath.Base(p); b != "hooks" && b != "config" || seen[g] {
				continue
			}
			seen[g] = true
			for _, f := range sweepGitPlaceholders(g) {
				run.refuse(Found{Kind: "control-path", Subject: f, Detail: crashedDetail(j) + "; a placeholder of that run, removed"})
			}
		}
	}
	for _, pl := range j.Places {
		run.undoNewControls(root, j, pl, budget)
	}
	for _, d := range j.Deny {
		if sweepDenyPlaceholder(d.Path) {
			run.refuse(Found{Kind: "control-path", Subject: d.Path, Detail: crashedDetail(j) + "; its placeholder for a denied path, removed"})
		}
		for i := len(d.Made) - 1; i >= 0; i-- {
			_ = os.Remove(d.Made[i]) // only when empty
		}
	}
}

// undoNestedRepos quarantines the .git entries below the top of a dead
// run's place that were not there at its start (a repository the sandbox
// made in a subdirectory), outermost first.
func (run *Run) undoNestedRepos(root string, j *runJournal, pl journalPlace, budget *copyBudget) {
	had := map[string]bool{}
	for _, r := range pl.Repos {
		had[r] = true
	}
	var found []string
	for _, p := range gitguard.Take([]string{pl.Path}).Paths() {
		if filepath.Base(p) == ".git" && filepath.Dir(p) != pl.Path && !had[p] {
			found = append(found, p)
		}
	}
	sort.Slice(found, func(a, b int) bool { return strings.Count(found[a], "/") < strings.Count(found[b], "/") })
	var moved []string
	for _, p := range found {
		inside := false
		for _, m := range moved {
			inside = inside || strings.HasPrefix(p, m+"/")
		}
		if inside {
			continue
		}
		rel, err := filepath.Rel(pl.Path, p)
		if err != nil {
			continue
		}
		if run.undoNewRepo(root, j, pl.Path, p, budget) {
			moved = append(moved, p)
			continue
		}
		r := Found{Kind: "control-path", Subject: p}
		dest, err := quarantine(root, j.ID, pl.Path, p, rel, budget)
		if err != nil {
			r.Detail = fmt.Sprintf("%s, and could not be moved to the quarantine: %v; remove it before running git here", crashedDetail(j), err)
		} else {
			r.Detail = crashedDetail(j) + "; moved to " + dest
			moved = append(moved, p)
		}
		run.refuse(r)
	}
}

// undoNewRepo does for p, a .git directory a dead run created in place,
// what that run's Close would have done (gitguard.NeutraliseNew): a
// repository keeps its work and only its control paths go to the
// quarantine; anything else named .git goes there whole. It reports
// false when p is no directory, for the caller to move it.
func (run *Run) undoNewRepo(root string, j *runJournal, place, p string, budget *copyBudget) bool {
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		return false
	}
	if run.sweptRepos == nil {
		run.sweptRepos = map[string]bool{}
	}
	run.sweptRepos[p] = true // undoNewControls leaves what is in it: done here
	for _, f := range gitguard.NeutraliseNew(place, p, run.quarantineSuffix()) {
		r := Found{Kind: "control-path", Subject: f.Path, Detail: crashedDetail(j) + "; " + f.Detail}
		if f.MovedTo != "" {
			rel, err := filepath.Rel(place, f.Path)
			if err == nil {
				var dest string
				if dest, err = quarantine(root, j.ID, place, f.MovedTo, rel, budget); err == nil {
					r.Detail = crashedDetail(j) + "; " + strings.Replace(f.Detail, "moved to "+f.MovedTo, "moved to "+dest, 1)
				}
			}
			if err != nil {
				r.Detail += fmt.Sprintf("; it could not be moved out of %s to the quarantine: %v", place, err)
			}
		}
		run.refuse(r)
	}
	return true
}
