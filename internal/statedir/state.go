package statedir

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/paths"
)

// The state directory is a 0700 host directory of each sandbox's own,
// created first thing in moat.New, never inside a supplied working
// directory:
//
//	moat-ID-state-RANDOM/
//	  owner    who created it (see sweep.go); out of the sandbox's reach
//	  tmp/     the private temp: /tmp inside (TMPDIR), or TMPDIR's host path
//	  vartmp/  /var/tmp inside
//	  home/    HOME, unless the caller supplies one
//	  build/   build mode's scratch (GOTMPDIR)
//
// Close removes it all; a later sandbox sweeps those whose owner died
// without closing.
const (
	TmpName       = "tmp"
	VarTmpName    = "vartmp"
	HomeName      = "home"
	BuildName     = "build"
	ownerFileName = "owner"
)

// NewState creates sandbox id's state directory in base (see Base), with
// its owner marker and private directories; withHome adds the private
// home. It first sweeps base of stale ones, once per process. The path
// returned is fully resolved; on error nothing is left behind.
func NewState(base, id string, withHome bool) (string, error) {
	sweepStaleOnce(base)
	dir, err := os.MkdirTemp(base, "moat-"+id+"-state-")
	if err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	fail := func(err error) (string, error) {
		_ = RemoveAll(dir)
		return "", fmt.Errorf("state directory %q: %w", dir, err)
	}
	if err := writeOwner(dir, id); err != nil {
		return fail(err)
	}
	subdirs := []string{TmpName, VarTmpName}
	if withHome {
		subdirs = append(subdirs, HomeName)
	}
	for _, d := range subdirs {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			return fail(paths.Bare(err))
		}
	}
	return dir, nil
}

// RemoveState removes a state directory and everything the sandbox left
// in it; an empty dir is none.
func RemoveState(dir string) error {
	if dir == "" {
		return nil
	}
	if err := RemoveAll(dir); err != nil {
		return fmt.Errorf("state directory %q: %w", dir, err)
	}
	return nil
}

// Sub is the state directory's entry name, or "" without a state
// directory.
func Sub(state, name string) string {
	if state == "" {
		return ""
	}
	return filepath.Join(state, name)
}

// Base is where state directories are made: the system temporary
// directory, or /tmp when that lies inside the supplied working directory
// (whatever the sandbox writes there must not be in the user's project).
func Base(workDir string) (string, error) {
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
		if wd == "" || !paths.Under(r, wd) {
			return r, nil
		}
	}
	return "", fmt.Errorf("state directory: the temporary directory %q lies inside the working directory %q; set TMPDIR to a directory outside it", os.TempDir(), workDir)
}

// randomToken returns 16 random bytes in hex.
func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
