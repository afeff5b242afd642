package gitguard

import (
	"os"
	"path/filepath"
)

// WorktreeTop is where git runs a repository's hooks and programs from,
// for the git directory g: the directory holding g when g is a .git
// directory, the directory of the .git file a linked worktree's gitdir
// file names, g itself otherwise (a bare repository).
func WorktreeTop(g string) string {
	if filepath.Base(g) == ".git" {
		return filepath.Dir(g)
	}
	if b, err := readBounded(filepath.Join(g, "gitdir"), 64<<10); err == nil {
		if p, ok := ParseCommondir(b); ok && filepath.IsAbs(p) {
			return filepath.Dir(filepath.Clean(p))
		}
	}
	return g
}

// namedIn records, at Take, the paths in a place that the configuration
// and hooks of the git directory g name (named.go), so that Close
// compares them like control paths. A path absent now is remembered too:
// the sandbox must not create it either.
// top is the worktree's top when the caller knows it, else "".
func (sc *scanner) namedIn(g, top string) {
	if top == "" {
		top = WorktreeTop(g)
	}
	found, incomplete := CollectNamed(g, top, sc.s.home)
	if incomplete != "" {
		if sc.s.namedGaps == nil {
			sc.s.namedGaps = map[string]string{}
		}
		sc.s.namedGaps[g] = incomplete
	}
	for _, n := range found {
		if sc.s.placeOf(n.Path) == "" {
			continue
		}
		if n.Dir {
			n.Path = HooksPathPin(n.Path)
		}
		sc.s.named = append(sc.s.named, n)
		sc.recordNamed(n)
	}
}

// recordNamed records one named path: a hooks directory whole, a file
// (or link) as it is.
func (sc *scanner) recordNamed(n Named) {
	if _, err := os.Lstat(n.Path); err != nil {
		return
	}
	if _, ok := sc.s.paths[n.Path]; !ok {
		sc.record(n.Path, roleNamed)
	}
	if n.Dir {
		sc.tree(n.Path, 0)
	}
}

// NamedPaths returns the paths in a writable place that the
// configuration and hooks of the repositories found at Take name: what
// the sandbox must not change, since the host's git runs it.
func (s *Snapshot) NamedPaths() []Named {
	if s == nil {
		return nil
	}
	return append([]Named(nil), s.named...)
}

// NamedGaps maps each git directory whose configuration or hooks were not
// read whole at Take to what was past the bounds; what those name may be
// unprotected. Nil when everything was read.
func (s *Snapshot) NamedGaps() map[string]string {
	if s == nil {
		return nil
	}
	return s.namedGaps
}
