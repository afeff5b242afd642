package moat

import (
	"os"
	"path/filepath"
)

// prepareWorkDir creates the automatic working directory, or checks the
// supplied one. Either way the stored path is absolute and fully resolved,
// since the kernel enforces rules on what a path resolves to.
func (s *Sandbox) prepareWorkDir() error {
	if err := s.checkPlaces(); err != nil { // workdir_check.go
		return err
	}
	// The state directory first, so that its owner marker exists before
	// an automatic working directory does (see sweep.go).
	if err := s.prepareStateDir(); err != nil { // state.go
		return err
	}
	if err := s.makeWorkDir(); err != nil {
		s.removeStateDir()
		return err
	}
	return nil
}

// makeWorkDir creates the automatic working directory next to the state
// directory, or checks the supplied one.
func (s *Sandbox) makeWorkDir() error {
	if s.cfg.WorkDir == "" {
		dir, err := os.MkdirTemp(filepath.Dir(s.stateDir), "moat-"+s.id+"-")
		if err != nil {
			return errorf("workdir: %v", err)
		}
		s.autoDir = true
		s.workDir = dir // set before resolving, so a failure still removes it
		resolved, err := filepath.EvalSymlinks(dir)
		if err != nil {
			s.removeWorkDir()
			return errorf("workdir %q: %v", dir, err)
		}
		s.workDir = resolved
		return nil
	}
	dir, err := filepath.Abs(s.cfg.WorkDir)
	if err != nil {
		return errorf("workdir %q: %v", s.cfg.WorkDir, err)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return errorf("workdir %q: %v", s.cfg.WorkDir, pathErr(err))
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return errorf("workdir %q: %v", s.cfg.WorkDir, pathErr(err))
	}
	if !fi.IsDir() {
		return errorf("workdir %q: not a directory", s.cfg.WorkDir)
	}
	s.workDir = resolved
	return nil
}

// pathErr drops the *PathError wrapper, whose path the caller already names.
func pathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
