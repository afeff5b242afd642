package moat

import (
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/paths"
)

// checkStatePlaces refuses a working directory, a home or a grant that is
// moat's per-user state directory or lies inside it. That directory holds
// the run journals, the quarantine, the record of the places sandboxes
// could write and the files the user trusted: a sandbox that could write
// it could erase the record of what it may have written, or forge a pin.
// A place that holds it (a grant of the home) is fine: every view hides
// the state directory (protectStateRoot).
func (s *Sandbox) checkStatePlaces() error {
	root, err := moatStateRoot() // controljournal.go
	if err != nil {
		return nil // New fails on the journal with the reason
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	check := func(subject, p string) error {
		if p == "" {
			return nil
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil // the place's own check says why
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		if paths.Under(abs, root) {
			return &PlaceError{Subject: subject, Path: p, Problem: "lies in moat's state directory " + root + ", which holds the run journals, the quarantine and the files you trusted; no sandbox may see it"}
		}
		return nil
	}
	if err := check("workdir", s.cfg.WorkDir); err != nil {
		return err
	}
	if err := check("home", s.cfg.Home); err != nil {
		return err
	}
	for _, g := range s.cfg.Grants {
		if err := check("grant", g.Path); err != nil {
			return err
		}
	}
	return nil
}
