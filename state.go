package moat

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
)

// The state directory is a 0700 host directory of each sandbox's own,
// created first thing in New, never inside a supplied working directory:
//
//	moat-ID-state-RANDOM/
//	  owner    who created it (see sweep.go); out of the sandbox's reach
//	  tmp/     the private temp: /tmp inside (TMPDIR), or TMPDIR's host path
//	  vartmp/  /var/tmp inside
//	  home/    HOME, unless Config.Home supplies one
//
// Build mode adds its scratch directory there (build.go). Close removes it
// all; a later New sweeps those whose owner died without closing.
const (
	stateTmpName    = "tmp"
	stateVarTmpName = "vartmp"
	stateHomeName   = "home"
	ownerFileName   = "owner"
)

// prepareStateDir creates the state directory with its owner marker and
// private directories, and checks a supplied home.
func (s *Sandbox) prepareStateDir() error {
	home, err := checkHomeConfig(s.cfg.Home, s.cfg.WorkDir)
	if err != nil {
		return err
	}
	base, err := stateBase(s.cfg.WorkDir)
	if err != nil {
		return err
	}
	sweepStaleOnce(base)
	dir, err := os.MkdirTemp(base, "moat-"+s.id+"-state-")
	if err != nil {
		return errorf("state directory: %v", err)
	}
	s.stateDir = dir // set before anything else can fail, so it is removed
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		s.stateDir = r
	}
	if err := writeOwner(s.stateDir, s.id); err != nil {
		s.removeStateDir()
		return errorf("state directory %q: %v", s.stateDir, err)
	}
	subdirs := []string{stateTmpName, stateVarTmpName}
	if home == "" {
		subdirs = append(subdirs, stateHomeName)
	}
	for _, d := range subdirs {
		if err := os.Mkdir(filepath.Join(s.stateDir, d), 0o700); err != nil {
			s.removeStateDir()
			return errorf("state directory %q: %v", s.stateDir, pathErr(err))
		}
	}
	s.homeDir = home
	return nil
}

// stateBase is where state directories are made: the system temporary
// directory, or /tmp when that lies inside the supplied working directory
// (whatever the sandbox writes there must not be in the user's project).
func stateBase(workDir string) (string, error) {
	wd := ""
	if workDir != "" {
		if abs, err := filepath.Abs(workDir); err == nil {
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				wd = r
			}
		}
	}
	for _, b := range []string{os.TempDir(), "/tmp"} {
		r, err := filepath.EvalSymlinks(b)
		if err != nil {
			continue
		}
		if wd == "" || !isUnderPath(r, wd) {
			return r, nil
		}
	}
	return "", errorf("state directory: the temporary directory %q lies inside the working directory %q; set TMPDIR to a directory outside it", os.TempDir(), workDir)
}

// removeStateDir removes the state directory and everything the sandbox
// left in it.
func (s *Sandbox) removeStateDir() error {
	if s.stateDir == "" {
		return nil
	}
	if err := removeAll(s.stateDir); err != nil {
		return errorf("state directory %q: %v", s.stateDir, err)
	}
	s.stateDir = ""
	return nil
}

// randomToken returns 16 random bytes in hex.
func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
