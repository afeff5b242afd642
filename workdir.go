package moat

import (
	"github.com/moat-sandbox/moat/internal/statedir"
)

// prepareWorkDir makes the sandbox's host directories (internal/statedir):
// its state directory first, so that its owner marker exists before an
// automatic working directory does (the sweep relies on it), then the
// automatic working directory, or the supplied one checked. Either way the
// stored paths are absolute and fully resolved, since the kernel enforces
// rules on what a path resolves to. On error nothing is left behind.
func (s *Sandbox) prepareWorkDir() error {
	if err := s.checkPlaces(); err != nil { // workdir_check.go
		return err
	}
	home, err := checkHomeConfig(s.cfg.Home, s.cfg.WorkDir) // home.go
	if err != nil {
		return err
	}
	base, err := statedir.Base(s.cfg.WorkDir)
	if err != nil {
		return errorf("%w", err)
	}
	state, err := statedir.NewState(base, s.id, home == "")
	if err != nil {
		return errorf("%w", err)
	}
	s.dirs.State, s.dirs.Home = state, home
	if s.cfg.WorkDir == "" {
		s.dirs.Work, err = statedir.NewWorkDir(state, s.id)
		s.dirs.Auto = err == nil
	} else {
		s.dirs.Work, err = statedir.ResolveWorkDir(s.cfg.WorkDir)
	}
	if err != nil {
		s.removeWorkDir()
		return errorf("%w", err)
	}
	if err := s.openCaches(); err != nil { // caches.go
		s.removeWorkDir()
		return err
	}
	return nil
}

// removeWorkDir releases the kept caches, then removes the automatic
// working directory and the state directory (private temp and home), in
// the order statedir.Dirs.Remove gives.
func (s *Sandbox) removeWorkDir() error {
	cacheErr := s.releaseCaches() // caches.go
	if err := s.dirs.Remove(); err != nil {
		return errorf("%w", err)
	}
	return cacheErr
}
