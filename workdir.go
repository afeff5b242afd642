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
	s.stateDir, s.homeDir = state, home
	if s.cfg.WorkDir == "" {
		s.workDir, err = statedir.NewWorkDir(state, s.id)
		s.autoDir = err == nil
	} else {
		s.workDir, err = statedir.ResolveWorkDir(s.cfg.WorkDir)
	}
	if err != nil {
		s.removeWorkDir()
		return errorf("%w", err)
	}
	if err := openCaches(&s.caches, &s.cfg, s.workDir, s.privateHome()); err != nil { // caches.go
		s.removeWorkDir()
		return err
	}
	return nil
}

// removeWorkDir removes the automatic working directory, then the state
// directory (private temp and home). In that order: the state directory's
// owner marker is what lets a later sweep remove an automatic working
// directory that a crash left behind, so it goes last.
func (s *Sandbox) removeWorkDir() error {
	cacheErr := s.caches.Release() // internal/cachehome
	if cacheErr != nil {
		cacheErr = errorf("%w", cacheErr)
	}
	var workErr error
	if s.autoDir && s.workDir != "" {
		if err := statedir.RemoveAll(s.workDir); err != nil {
			workErr = errorf("workdir %q: %w", s.workDir, err)
		}
	}
	if workErr != nil {
		return workErr // the state directory stays, so the sweep finds both
	}
	if err := statedir.RemoveState(s.stateDir); err != nil {
		return errorf("%w", err)
	}
	s.stateDir = ""
	return cacheErr
}

// privateRoots are the per-sandbox host directories (private temp, private
// home, build scratch) that the sandbox writes besides its working
// directory and grants, and its kept cache stores. They count against the
// disk limit. Close removes them, except a home supplied by Config.Home
// and the cache stores, which are kept.
func (s *Sandbox) privateRoots() []string {
	var out []string
	if s.stateDir != "" {
		out = append(out, s.stateDir)
	}
	if s.homeDir != "" {
		out = append(out, s.homeDir)
	}
	return append(out, s.caches.Stores()...)
}

// privateTmp is the host directory that is the sandbox's /tmp (and TMPDIR);
// "" before the state directory exists.
func (s *Sandbox) privateTmp() string { return statedir.Sub(s.stateDir, statedir.TmpName) }

// privateVarTmp is the host directory that is the sandbox's /var/tmp.
func (s *Sandbox) privateVarTmp() string { return statedir.Sub(s.stateDir, statedir.VarTmpName) }

// privateHome is the sandbox's HOME, at the same path inside as on the
// host: the supplied Config.Home, or a fresh one in the state directory.
func (s *Sandbox) privateHome() string {
	if s.homeDir != "" {
		return s.homeDir
	}
	return statedir.Sub(s.stateDir, statedir.HomeName)
}
