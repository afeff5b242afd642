package moat

import (
	"errors"

	"github.com/moat-sandbox/moat/internal/statedir"
	"github.com/moat-sandbox/moat/internal/workdircheck"
)

// CheckWorkDir reports why dir cannot be a supplied working directory, or
// nil. dir is resolved first; one that does not exist is left to [New] to
// report. It refuses the root, the kernel's pseudo file systems and the
// system directories, a directory the user cannot list or write, and,
// unless allowHome, a home directory, a directory holding one, one of the
// home's control places (~/.local/bin, ~/.config, ~/.ssh, ...) or a
// directory holding one, and one that holds a directory of PATH: all of
// them would let the sandbox change what runs later on the host.
func CheckWorkDir(dir string, allowHome bool) error {
	return placeError(workdircheck.WorkDir(dir, allowHome))
}

// CheckHome reports why dir cannot be a sandbox's kept home
// ([Config.Home], the CLI's --home), or nil. It must be an existing
// directory of the user's, and not a place whose files run or are trusted
// later outside the sandbox: the user's real home, a directory holding it,
// ~/.local/bin, ~/.config and the like, a directory holding one of PATH's
// (the rules of [CheckWorkDir] without AllowHomeWorkDir).
func CheckHome(dir string) error {
	_, err := workdircheck.Home(dir, ToolchainPaths)
	return placeError(err)
}

// placeError gives a place refused by internal/workdircheck as a
// *PlaceError; other errors, and nil, are returned as they are.
func placeError(err error) error {
	var e *workdircheck.Error
	if errors.As(err, &e) {
		return &PlaceError{Subject: e.Subject, Path: e.Path, Problem: e.Problem, unsafe: e.Unsafe}
	}
	return err
}

// checkPlaces refuses, before anything is created, a supplied working
// directory that [CheckWorkDir] refuses, a grant of the root, a place in
// moat's state directory (internal/workdircheck), too few open files, and
// an audit log the sandbox could write.
func checkPlaces(cfg *Config) error {
	if cfg.WorkDir != "" {
		if err := CheckWorkDir(cfg.WorkDir, cfg.AllowHomeWorkDir); err != nil {
			return err
		}
	}
	grants := make([]string, len(cfg.Grants))
	for i, g := range cfg.Grants {
		grants[i] = g.Path
	}
	if err := workdircheck.Grants(grants); err != nil {
		return placeError(err)
	}
	if root, err := moatStateRoot(); err == nil { // controljournal.go; if it fails, New fails on the journal with the reason
		if err := workdircheck.StatePlaces(root, cfg.WorkDir, cfg.Home, grants); err != nil {
			return placeError(err)
		}
	}
	if err := checkOpenFiles(cfg.Limits.OpenFiles); err != nil { // validate.go
		return err
	}
	return checkAuditLogPlace(cfg)
}

// prepareWorkDir makes the sandbox's host directories (internal/statedir):
// its state directory first, so that its owner marker exists before an
// automatic working directory does (the sweep relies on it), then the
// automatic working directory, or the supplied one checked. Either way the
// stored paths are absolute and fully resolved, since the kernel enforces
// rules on what a path resolves to. On error nothing is left behind.
func (s *Sandbox) prepareWorkDir() error {
	if err := checkPlaces(&s.cfg); err != nil {
		return err
	}
	home, err := workdircheck.HomeConfig(s.cfg.Home, s.cfg.WorkDir, ToolchainPaths)
	if err != nil {
		return placeError(err)
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
	if err := openCaches(&s.caches, &s.cfg, s.dirs.Work, s.dirs.PrivateHome()); err != nil { // caches.go
		s.removeWorkDir()
		return err
	}
	return nil
}

// removeWorkDir releases the kept caches, then removes the automatic
// working directory and the state directory (private temp and home), in
// the order statedir.Dirs.Remove gives.
func (s *Sandbox) removeWorkDir() error {
	cacheErr := s.caches.Release() // internal/cachehome
	if cacheErr != nil {
		cacheErr = errorf("%w", cacheErr)
	}
	if err := s.dirs.Remove(); err != nil {
		return errorf("%w", err)
	}
	return cacheErr
}
