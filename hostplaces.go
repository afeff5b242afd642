package moat

import "github.com/moat-sandbox/moat/internal/hostinput"

// outlivingPlaces are the places the sandbox can write whose content
// outlives it: a supplied working directory, a supplied home, the kept
// cache stores, the
// writable grants and a venv it may install into. New records them (see
// recordPlaces) so that a later read of a config, a policy or a fragment
// there is refused unless the user pinned its content.
func (s *Sandbox) outlivingPlaces() []string {
	out := s.gitPlaces()
	if s.homeDir != "" {
		out = append(out, s.homeDir)
	}
	out = append(out, s.caches.Stores()...) // internal/cachehome
	if p := s.cfg.Python; p != nil && p.AllowPipInstall && p.Venv != "" {
		out = append(out, p.Venv)
	}
	return out
}

// recordPlaces records the run's outliving places in the user's moat
// state directory, before any command runs. It fails closed: a run whose
// places cannot be recorded does not start, since a later run could not
// tell what this one may have written. A place recorded already costs one
// lstat.
func (s *Sandbox) recordPlaces() error {
	places := s.outlivingPlaces()
	if len(places) == 0 {
		return nil
	}
	root, err := moatStateRoot() // controljournal.go
	if err != nil {
		return err
	}
	if err := (hostinput.Store{Dir: root}).RecordPlaces(places); err != nil {
		return errorf("%w", err)
	}
	return nil
}

// StateDir returns moat's per-user state directory, making it (0700) if
// needed: run journals, the quarantine, the record of the places that
// sandboxes could write, and the files the user trusts. Every sandbox's
// view hides it. An error means none could be made safe.
func StateDir() (string, error) { return moatStateRoot() }
