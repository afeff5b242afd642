// Package pysandbox is the host side of moat's Python sandbox: where a
// venv is kept in the cache and the lock on it, the checks of the host
// tools that build it, the host read of a venv a sandbox will use, the
// grants that follow from it, and the interpreter a sandbox runs.
package pysandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/hostinput"
	"github.com/moat-sandbox/moat/internal/venv"
)

// CacheDir is the venv cache dir made absolute, checked: empty means
// moat/venvs under [os.UserCacheDir]. A cache a sandbox of an earlier run
// could write is refused, since it holds the manifests the host trusts.
// stateRoot is moat's state root, which holds the pins of host inputs.
func CacheDir(dir, stateRoot string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("venv cache: %v; set VenvManager.CacheDir", err)
		}
		dir = filepath.Join(base, "moat", "venvs")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("venv cache %q: %v", dir, err)
	}
	if err := hostinput.CheckDir(dir, ToolOptions(stateRoot, "venv cache")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return dir, nil
}

// Named places the venv s names by path (not empty): s.Path made
// absolute, its manifest and build cache in the cache dir, keyed by that
// path, never inside the venv, which the install sandbox (and, with
// AllowPipInstall, the code) writes.
func Named(s venv.Spec, dir string) (venv.Spec, error) {
	abs, err := filepath.Abs(s.Path)
	if err != nil {
		return s, fmt.Errorf("venv %q: %v", s.Path, err)
	}
	s.Path = abs
	base := filepath.Join(dir, "named", venv.PathKey(abs))
	s.Manifest, s.BuildCache = base+".json", base+".build"
	return s, nil
}

// Cached places a venv without a path in the cache dir, keyed by its
// interpreter, package set and system site-packages switch, and by
// mutable: a venv pip may change is kept apart from the read-only ones.
// Its error is [venv.KeyOf]'s, as it is.
func Cached(s venv.Spec, dir string, mutable bool) (venv.Spec, error) {
	extra := ""
	if mutable {
		extra = "+pip-install"
	}
	key, err := venv.KeyOf(s, extra)
	if err != nil {
		return s, err
	}
	name := key
	if mutable {
		name += "-pip"
	}
	s.Path = filepath.Join(dir, name)
	s.Manifest, s.BuildCache = s.Path+".json", s.Path+".build"
	return s, nil
}
