package moat

import (
	"math"

	"github.com/moat-sandbox/moat/internal/runjournal"
)

// The run journal, its crash sweep, the quarantine and the git control
// check of the writable places live in internal/runjournal. New opens the
// run there before any command runs (openJournal) and Close checks and
// closes it once every sandboxed process is dead (closeJournal).

// openJournal sweeps what runs killed before Close left, records the git
// control paths of the places whose content outlives the sandbox, writes
// the run journal and records the outliving places; New calls it before
// any command can run. It fails closed.
func (s *Sandbox) openJournal() error {
	// The git places: a supplied working directory and the writable
	// grants. An automatic working directory is removed by Close, so
	// nothing in it can run later.
	var places []string
	if !s.dirs.Auto && s.dirs.Work != "" {
		places = append(places, s.dirs.Work)
	}
	for _, g := range s.cfg.Grants {
		if g.Access&WRITE != 0 {
			places = append(places, g.Path)
		}
	}
	// The other places it can write whose content outlives it: a
	// supplied home, the kept cache stores and a venv it may install
	// into.
	var outliving []string
	if s.dirs.Home != "" {
		outliving = append(outliving, s.dirs.Home)
	}
	outliving = append(outliving, s.caches.Stores()...) // caches.go
	if p := s.cfg.Python; p != nil && p.AllowPipInstall && p.Venv != "" {
		outliving = append(outliving, p.Venv)
	}
	run, err := runjournal.Open(runjournal.Config{ID: s.id, Places: places, Outliving: outliving, Deny: s.cfg.Deny,
		Hooks: runjournal.Hooks{Refuse: func(f runjournal.Found) {
			s.refused.Add(Refusal{Kind: f.Kind, Subject: f.Subject, Detail: f.Detail})
		}}})
	if err != nil {
		return errorf("%w", err)
	}
	s.journal = run
	return nil
}

// closeJournal neutralises the git control paths the run created or
// changed, then deletes the journal; Close calls it once no sandboxed
// process is left.
func (s *Sandbox) closeJournal() {
	var creatable int64
	if s.disk.Inodes() > 0 {
		// Every command had that many inodes to make directories with:
		// the check reads as many more directories as New saw.
		n, w := s.disk.Inodes(), max(s.disk.Watches(), 1)
		if n > math.MaxInt64/w {
			n = math.MaxInt64
		} else {
			n *= w
		}
		creatable = n
	}
	s.journal.CheckGit(creatable)
	s.journal.Close() // the run is undone: placeholders gone, entries quarantined
}

// moatStateRoot is the user's moat state directory
// (runjournal.StateRoot).
func moatStateRoot() (string, error) {
	root, err := runjournal.StateRoot()
	if err != nil {
		return "", errorf("%w", err)
	}
	return root, nil
}

// StateDir returns moat's per-user state directory, making it (0700) if
// needed: run journals, the quarantine, the record of the places that
// sandboxes could write, and the files the user trusts. Every sandbox's
// view hides it. An error means none could be made safe.
func StateDir() (string, error) { return moatStateRoot() }
