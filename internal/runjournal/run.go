package runjournal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moat-sandbox/moat/internal/gitguard"
	quarantinedir "github.com/moat-sandbox/moat/internal/quarantine"
	"github.com/moat-sandbox/moat/internal/spec"
)

// Found is one thing the sweep of a dead run or the check at Close did or
// found, for the sandbox to report as a Refusal. The zero value reports
// nothing in particular.
type Found struct {
	// Kind is "control-path", "git-control" or "agent-instructions".
	Kind string
	// Subject is the path concerned.
	Subject string
	// Detail says what happened, in words.
	Detail string
}

// Hooks is how a Run hands back what it finds. The zero value drops it.
type Hooks struct {
	// Refuse reports one Found; nil drops it.
	Refuse func(Found)
}

// Config is what a sandbox's run records. The zero value records nothing
// and only sweeps.
type Config struct {
	// ID is the sandbox's id: its journal's name, and what names set
	// aside in a place end with.
	ID string
	// Places are the places whose content outlives the sandbox and whose
	// git control paths it checks: a supplied working directory and the
	// writable grants.
	Places []string
	// Outliving are the other places the sandbox may write whose content
	// outlives it (a supplied home, the kept cache stores, a venv it may
	// install into), recorded with Places (places.go).
	Outliving []string
	// Deny are the denied paths; those missing are journalled, for the
	// placeholders the engine may make there.
	Deny []string
	// Hooks receive what the sweep and the checks find.
	Hooks Hooks
}

// Run is a sandbox's journal and the git control paths of its places at
// start. A nil Run journals and checks nothing; Open makes one.
type Run struct {
	id     string
	places []string
	hooks  Hooks
	// snap is the git control paths of the places at start, checked by
	// CheckGit (gitcontrol.go); nil when there are none.
	snap *gitguard.Snapshot
	// file is the run journal; nil when the run has neither a place
	// nor a missing denied path.
	file *journalState
	// sweptRepos are the .git directories a sweep of a dead run's
	// journal kept, with their control paths set aside (sweep.go).
	sweptRepos map[string]bool
}

// Open starts a sandbox's run, before any command of it can run: it
// sweeps what runs killed before Close left (sweep.go), so that nothing a
// dead run planted counts as present at this run's start, then records
// the git control paths of c.Places, writes the run journal and records
// the outliving places (places.go). It fails closed: a run that needs a
// journal or a record and cannot write one is not started. Errors name
// their subject, without the "moat:" prefix.
func Open(c Config) (*Run, error) {
	run := &Run{id: c.ID, places: c.Places, hooks: c.Hooks}
	run.sweepCrashed()
	run.snapshotGit()
	if err := run.openJournal(c.Deny); err != nil {
		return nil, err
	}
	if err := recordPlaces(append(append([]string(nil), c.Places...), c.Outliving...)); err != nil {
		run.Close()
		return nil, err
	}
	return run, nil
}

// refuse hands f to the hooks.
func (run *Run) refuse(f Found) {
	if run.hooks.Refuse != nil {
		run.hooks.Refuse(f)
	}
}

// journalState is a sandbox's journal, once written.
type journalState struct {
	root string // the state directory
	path string // the journal file
	// keep leaves the journal for a later sweep: something Close set
	// aside could not be moved out of its place.
	keep bool
}

// openJournal records this run's journal; New calls it after the git
// snapshot and before the engine. A run without a writable place or a
// missing denied path writes none. It fails closed: a run that needs a
// journal and cannot write one is not started.
func (run *Run) openJournal(denied []string) error {
	places := run.places
	var deny []journalDeny
	for _, d := range denied {
		if jd, ok := missingDeny(d); ok {
			deny = append(deny, jd)
		}
	}
	if len(places) == 0 && len(deny) == 0 {
		return nil
	}
	root, err := StateRoot()
	if err != nil {
		return err
	}
	dir, err := stateSub(root, "journal")
	if err != nil {
		return fmt.Errorf("run journal: %w", err)
	}
	j := &runJournal{Version: journalVersion, ID: run.id, Owner: selfOwner(), Deny: deny}
	bytesLeft := maxJournalControlBytes
	for _, p := range places {
		pl := journalPlace{Path: p, Present: topControlEntries(p), Repos: run.nestedRepos(p)}
		pl.Controls, pl.Cut = run.startControls(p, &bytesLeft)
		pl.Recorded = !pl.Cut
		j.Places = append(j.Places, pl)
	}
	path, err := writeJournal(dir, j)
	if err != nil {
		return fmt.Errorf("run journal: %w", err)
	}
	run.file = &journalState{root: root, path: path}
	return nil
}

// Close deletes the journal; the sandbox's Close calls it once the run is
// undone, and New when it fails after Open. A nil Run has none.
func (run *Run) Close() {
	if run != nil && run.file != nil {
		if !run.file.keep {
			_ = os.Remove(run.file.path)
		}
		// Bounded by age and size, at most once an hour, here at the end
		// of a run and never at its start (internal/quarantine).
		_ = quarantinedir.AutoPrune(run.file.root, time.Now())
		run.file = nil
	}
}

// nestedRepos lists the .git entries below the top of place that the
// git snapshot found at start.
func (run *Run) nestedRepos(place string) []string {
	if run.snap == nil {
		return nil
	}
	var out []string
	for _, p := range run.snap.Paths() {
		if filepath.Base(p) == ".git" && filepath.Dir(p) != place && strings.HasPrefix(p, place+"/") {
			out = append(out, p)
		}
	}
	return out
}

// ProtectStateRoot adds the moat state directory (journals, quarantine)
// and the paths more returns for it to the view's protected paths, so
// that no level or grant of a parent shows them to a sandbox; a grant of
// the directory itself wins, as for every protected path. Without a state
// directory v is returned as it is.
func ProtectStateRoot(v spec.View, more func(stateRoot string) []string) spec.View {
	root, err := StateRoot()
	if err != nil {
		return v
	}
	v = protectPath(v, root)
	for _, r := range more(root) {
		v = protectPath(v, r)
	}
	return v
}

// protectPath adds root to v's protected paths unless one of them holds
// it already.
func protectPath(v spec.View, root string) spec.View {
	if root == "" {
		return v
	}
	for _, p := range v.Protected {
		if p == root || strings.HasPrefix(root, p+"/") {
			return v
		}
	}
	v.Protected = append(v.Protected, root)
	return v
}
