package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/moat-sandbox/moat/internal/gitguard"
	"github.com/moat-sandbox/moat/internal/homecontrol"
	"github.com/moat-sandbox/moat/internal/spec"
)

// Guards for denied paths that do not exist when the sandbox is built but
// lie in a writable place. With a mount namespace the engine does not
// carve the place for them (which would stop the sandbox from creating
// anything at its top): it creates an empty placeholder directory on the
// host at the denied path and masks it like any existing denied
// directory, with an empty tmpfs without permissions, read-only. In the
// sandbox the name then exists, so mkdir fails, and nothing can be
// written into it, listed, renamed, removed or chmodded (EACCES, EBUSY,
// EROFS). The placeholder holds marker files, each with the owner line
// of the control-path placeholders (host_control_placeholder_linux.go)
// and named for its engine (.moat-placeholder.PID.N), so that Close
// removes exactly what its engine made, sandboxes running at once share a
// placeholder, and a later run removes the markers of a killed run (owner
// dead) and the placeholder they leave empty. Missing directories on the
// way to a denied path are made too (the sandbox sees them as ordinary
// directories of the place) and removed at Close when still empty; a
// killed run leaves them, empty. A host without user
// namespaces gets no placeholder, and its places are carved as before;
// after a fallback to Landlock alone a placeholder is carved like any
// existing denied directory.

// denyGuards are the placeholders one engine made or shares.
type denyGuards struct {
	line   string   // the owner line each marker holds
	marker string   // the name of this engine's marker file
	paths  []string // placeholder directories, in the order guarded
	files  []string // placeholder files (fileGuardNames), this engine's own
	made   []string // directories made on the way to them, outermost first
}

// fileGuardNames are denied names whose placeholder is a file holding the
// owner line, not a directory: tools take a directory named .git for a
// repository (go build stamps it with git, and fails), while git's own
// and go's searches pass over an unreadable file of that name. A file
// holds no markers, so it is not shared: a run that finds another live
// run's file placeholder masks it as it is.
//
// The home's run-code files held inside a hidden directory that a pattern
// made writable (homecontrol.Files: ~/.config/lesskey, ...) get a file too.
var fileGuardNames = map[string]bool{".git": true}

// fileGuard reports whether the placeholder of the denied path d is a
// file (fileGuardNames, homecontrol.IsFile).
func fileGuard(d string) bool {
	return fileGuardNames[filepath.Base(d)] || homecontrol.IsFile(d)
}

// guardSeq tells apart the markers of engines of one process.
var guardSeq atomic.Uint64

// guardable reports whether d, a denied path, lies strictly inside one of
// places, its parent an existing directory reached through no link.
func guardable(d string, places []string) bool {
	in := false
	for _, w := range places {
		if isStrictlyUnder(d, w) {
			in = true
		}
	}
	if !in {
		return false
	}
	parent := filepath.Dir(d)
	fi, err := os.Lstat(parent)
	if err != nil || !fi.IsDir() {
		return false
	}
	r, err := filepath.EvalSymlinks(parent)
	return err == nil && r == parent
}

// planDenyGuards guards each denied path of p that is missing and
// guardable with a placeholder, after sweeping the markers of dead owners
// there. A placeholder of a sandbox still running is shared: this engine
// adds its own marker, so that the first Close does not remove the
// directory (which would lift the other sandbox's mask with it). Nothing
// is made for a granted path.
func planDenyGuards(p *spec.Policy, granted func(string) bool) *denyGuards {
	g := &denyGuards{line: ownerLine(), marker: fmt.Sprintf("%s.%d.%d", placeholderMarker, os.Getpid(), guardSeq.Add(1))}
	places := p.WritablePlaces()
	if p.AutoWorkDir && p.WorkDir != "" {
		places = append(places, p.WorkDir)
	}
	for _, d := range p.FS.Deny {
		if granted(d) {
			continue
		}
		if slices.Contains(g.paths, d) {
			continue
		}
		// A denied path whose parent is missing too: the directories on
		// the way are made, and removed at Close when left empty.
		made := g.makeWay(d, places)
		if !guardable(d, places) {
			g.removeMade(made)
			continue
		}
		sweepDenyGuard(d)
		_, err := os.Lstat(d)
		if fileGuard(d) {
			if !os.IsNotExist(err) || writeNew(d, g.line) != nil {
				g.removeMade(made)
				continue // exists (masked as it is), or carved instead
			}
			g.files = append(g.files, d)
			g.made = append(g.made, made...)
			continue
		}
		switch {
		case os.IsNotExist(err):
			if os.Mkdir(d, 0o700) != nil {
				g.removeMade(made)
				continue // carved instead (applyFS sees it missing)
			}
		case err == nil && isPlaceholder(d):
			// Another sandbox's: shared.
		default:
			continue // exists: masked as it is
		}
		if err := writeNew(filepath.Join(d, g.marker), g.line); err != nil {
			_ = os.Remove(d) // only when empty: ours, just made
			g.removeMade(made)
			continue
		}
		g.paths = append(g.paths, d)
		g.made = append(g.made, made...)
	}
	return g
}

// makeWay makes the missing directories between the deepest existing
// one inside places and d's parent, when no link is on the way, and
// returns those it made, outermost first.
func (g *denyGuards) makeWay(d string, places []string) []string {
	var missing []string
	c := filepath.Dir(d)
	for {
		if _, err := os.Lstat(c); err == nil {
			break
		} else if !os.IsNotExist(err) {
			return nil
		}
		inside := false
		for _, w := range places {
			if isStrictlyUnder(c, w) {
				inside = true
			}
		}
		if !inside {
			return nil
		}
		missing = append([]string{c}, missing...)
		c = filepath.Dir(c)
	}
	if len(missing) == 0 {
		return nil
	}
	if r, err := filepath.EvalSymlinks(c); err != nil || r != c {
		return nil
	}
	var made []string
	for _, m := range missing {
		if os.Mkdir(m, 0o755) != nil {
			break
		}
		made = append(made, m)
	}
	return made
}

// removeMade removes the directories made on the way that are still
// empty, innermost first.
func (g *denyGuards) removeMade(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		_ = os.Remove(made[i]) // fails, harmlessly, on a non-empty directory
	}
}

// cleanup removes g's markers, and each placeholder left empty; one the
// host or another sandbox still uses is kept.
func (g *denyGuards) cleanup() {
	if g == nil {
		return
	}
	for i := len(g.paths) - 1; i >= 0; i-- {
		d := g.paths[i]
		m := filepath.Join(d, g.marker)
		if b, ok := readSmall(m); ok && string(b) == g.line && os.Remove(m) == nil {
			_ = os.Remove(d) // fails, harmlessly, on a non-empty directory
		}
	}
	for _, f := range g.files {
		if b, ok := readSmall(f); ok && string(b) == g.line {
			_ = os.Remove(f)
		}
	}
	g.removeMade(g.made)
	g.paths, g.files, g.made = nil, nil, nil
}

// isMarker reports whether name is a placeholder marker's.
func isMarker(name string) bool {
	return name == placeholderMarker || strings.HasPrefix(name, placeholderMarker+".")
}

// isPlaceholder reports whether the directory d holds nothing but
// markers of owners still running, one at least.
func isPlaceholder(d string) bool {
	entries, err := os.ReadDir(d)
	if err != nil || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		if !isMarker(e.Name()) {
			return false
		}
		b, ok := readSmall(filepath.Join(d, e.Name()))
		if !ok || !strings.HasPrefix(string(b), placeholderPrefix) || staleOwner(b) {
			return false
		}
	}
	return true
}

// sweepDenyGuard removes from the directory d the markers that runs
// whose process is dead left behind, then d itself if that emptied it.
// Anything else is left alone.
func sweepDenyGuard(d string) {
	fi, err := os.Lstat(d)
	if err == nil && fi.Mode().IsRegular() && fileGuard(d) {
		// A file placeholder: the owner line is its content.
		if b, ok := readSmall(d); ok && staleOwner(b) {
			_ = os.Remove(d)
		}
		return
	}
	if err != nil || !fi.IsDir() {
		return
	}
	entries, err := os.ReadDir(d)
	if err != nil {
		return
	}
	removed := false
	for _, e := range entries {
		m := filepath.Join(d, e.Name())
		if b, ok := readSmall(m); ok && isMarker(e.Name()) && staleOwner(b) && os.Remove(m) == nil {
			removed = true
		}
	}
	if removed {
		_ = os.Remove(d) // fails, harmlessly, on a non-empty directory
	}
}

// createdByRunCheck reports whether r, a read-only path that does not
// exist, is a control name at the top of a place whose creation Close
// undoes (internal/gitguard moves aside a new .git, .agents, .pi, .moat-*
// or .heimdall-* there and reports it), so that no carve is needed.
func createdByRunCheck(p *spec.Policy, r string) bool {
	base := filepath.Base(r)
	if base != ".git" && !gitguard.IsControlName(base) {
		return false
	}
	return slices.Contains(p.WritablePlaces(), filepath.Dir(r))
}

// grantedPath reports whether path is the working directory, a private
// directory or a grant's path: such a path wins over a deny of it.
func (e *Engine) grantedPath(path string) bool {
	p := &e.policy
	if path == p.WorkDir || path == p.Private.Tmp || path == p.Private.VarTmp || path == p.Private.Home {
		return true
	}
	for _, g := range p.Grants {
		if g.Path == path {
			return true
		}
	}
	return false
}

// maskable reports whether a mask can cover d: an existing directory or
// regular file, not through a final link.
func maskable(d string) bool {
	fi, err := os.Lstat(d)
	return err == nil && (fi.IsDir() || fi.Mode().IsRegular())
}

// pinWay binds the directories between place and p onto themselves, so
// that renaming one (moving p's mask away with it) fails with EBUSY.
func pinWay(s *helperSpec, p, place string) {
	for dir := filepath.Dir(p); isStrictlyUnder(dir, place); dir = filepath.Dir(dir) {
		if !slices.Contains(s.ControlPins, dir) {
			s.ControlPins = append(slices.Clip(s.ControlPins), dir)
		}
	}
}
