package gitguard

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/moat-sandbox/moat/internal/controlfiles"
	"github.com/moat-sandbox/moat/internal/paths"
)

// Change is one control path that differs between two snapshots.
type Change struct {
	// Path is the control path.
	Path string
	// Created is true for a path that did not exist before; otherwise it
	// was changed (content, mode, type, or replaced by another file).
	Created bool
	// Unsure says why the path could not be fully examined; it is then
	// treated as changed.
	Unsure string
	role   role
	kind   fs.FileMode
	old    *state
}

// Diff lists the control paths of after that before did not have or that
// differ, deepest first. A path that before did not see only because its
// scan was incomplete, and whose inode has not changed since before was
// taken, is left out: it predates the run.
func Diff(before, after *Snapshot) []Change {
	var out []Change
	for p, a := range after.paths {
		b, ok := before.paths[p]
		switch {
		case !ok:
			if w := before.placeOf(p); w != "" && before.incomplete[w] != "" {
				if ct, known := changeTime(a.info); known && ct.Before(before.taken.Add(-time.Second)) {
					continue
				}
			}
			out = append(out, Change{Path: p, Created: true, role: a.role, kind: a.kind})
		case b.differs(a, before.taken):
			unsure := a.unsure
			if unsure == "" {
				unsure = b.unsure
			}
			out = append(out, Change{Path: p, Unsure: unsure, role: a.role, kind: a.kind, old: b})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if di, dj := strings.Count(out[i].Path, "/"), strings.Count(out[j].Path, "/"); di != dj {
			return di > dj
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// Finding is one control path that a run created or changed, or one part
// of a place that could not be checked, with what was done about it.
type Finding struct {
	// Path is the control path, as it was named during the run.
	Path string
	// MovedTo is where it is now; empty when nothing was moved.
	MovedTo string
	// Detail says what was found and done, in words.
	Detail string
	// Kind is "agent-instructions" for a file that instructs a host
	// agent (reported, not moved), "control-path" for a control entry of
	// internal/controlfiles' table; empty for git's.
	Kind string
}

// Check takes a new snapshot of s's places and neutralises every control
// path created or changed since s was taken (see [Neutralise]), and
// reports any part of a place that could not be examined. Call it only
// once nothing of the sandbox runs any more.
func (s *Snapshot) Check(suffix string) []Finding {
	if s == nil || len(s.places) == 0 {
		return nil
	}
	after := takeAfter(s)
	found := Neutralise(s, Diff(s, after), suffix)
	for _, d := range after.repaired {
		found = append(found, Finding{Path: d, Detail: "made unreadable by the sandbox; its owner's permissions were restored so that it could be checked for repositories"})
	}
	var inc []string
	for w := range after.incomplete {
		inc = append(inc, w)
	}
	sort.Strings(inc)
	for _, w := range inc {
		found = append(found, Finding{Path: w, Detail: after.incomplete[w]})
	}
	return found
}

// Neutralise moves each changed control path aside, renaming X to
// X+suffix (or X+suffix+".N" when that is taken), and puts back the
// original content of a regular file it had kept; a git config it did not
// keep is replaced by its inert part ([SanitizeConfig]). A path inside a
// control directory that moves too (hooks/x when hooks/ is new) moves
// with it and is not listed on its own. A .git directory the run created
// is not moved: its objects, refs, index and history stay, and only its
// control paths (each listed) are set aside. Links are never followed.
func Neutralise(before *Snapshot, changes []Change, suffix string) []Finding {
	moving := map[string]Change{}
	for _, c := range changes {
		moving[c.Path] = c
	}
	var out []Finding
	kept := map[string][]string{}   // a kept new .git -> what was set aside inside it
	folded := map[string][]string{} // a moved .git -> what moved inside it
	for _, c := range changes {
		if keepsWork(c) {
			kept[c.Path] = nil
		}
	}
	for _, c := range changes {
		if rideAlong(c.Path, moving) {
			continue
		}
		w := before.placeOf(c.Path)
		if w == "" {
			continue
		}
		if keepsWork(c) {
			continue // listed below, once what is inside is done
		}
		if c.role == roleInstruct {
			what := "created"
			if !c.Created {
				what = "changed"
			}
			out = append(out, Finding{Path: c.Path, Kind: "agent-instructions",
				Detail: what + " by the sandbox: a file that instructs a host agent, left in place; read it before an agent works here"})
			continue
		}
		f := Finding{Path: c.Path}
		if controlfiles.ToolOf(strings.TrimPrefix(c.Path, w+"/")) != "" {
			f.Kind = "control-path"
		}
		what := "created by the sandbox"
		if !c.Created {
			what = "changed by the sandbox"
		}
		if c.Unsure != "" {
			what += " or could not be checked (" + c.Unsure + ")"
		}
		moved, err := moveAside(w, c.Path, suffix)
		if err != nil {
			f.Detail = fmt.Sprintf("%s, and could not be moved aside: %v; remove it before running git here", what, err)
			out = append(out, f)
			continue
		}
		f.MovedTo = moved
		f.Detail = what + "; moved to " + moved
		switch {
		case c.old != nil && (c.old.kept && c.old.kind == 0 || c.old.kind&fs.ModeSymlink != 0):
			var err error
			if c.old.kind == 0 {
				err = restoreFile(w, c.Path, c.old.perm, c.old.content)
			} else {
				err = restoreLink(w, c.Path, c.old.link)
			}
			if err != nil {
				f.Detail += fmt.Sprintf("; the original could not be restored: %v", err)
			} else {
				f.Detail += "; the original restored"
			}
		case c.role == roleControl && c.kind == 0 && filepath.Base(c.Path) == "config":
			f.Detail += sanitizeInPlace(w, c.Path, moved)
		}
		if g := enclosingDotGit(c.Path, moving); g != "" {
			if _, ok := kept[g]; ok {
				kept[g] = append(kept[g], strings.TrimPrefix(c.Path, g+"/"))
			} else {
				folded[g] = append(folded[g], strings.TrimPrefix(c.Path, g+"/"))
				continue
			}
		}
		out = append(out, f)
	}
	for i, f := range out {
		if inner := folded[f.Path]; len(inner) > 0 {
			sort.Strings(inner)
			out[i].Detail += fmt.Sprintf(" (a repository: inside it %s renamed with the same suffix, so git reads none of it)", strings.Join(inner, ", "))
		}
	}
	var repos []string
	for g := range kept {
		repos = append(repos, g)
	}
	sort.Strings(repos)
	for _, g := range repos {
		inner := kept[g]
		sort.Strings(inner)
		d := "a repository created by the sandbox; kept with its objects, refs, index and history"
		if len(inner) > 0 {
			d += "; set aside from it, since they can make git run programs: " + strings.Join(inner, ", ")
		}
		out = append(out, Finding{Path: g, Detail: d})
	}
	return out
}

// keepsWork reports whether c is a .git directory the run created, which
// stays in place once its control paths are set aside.
// Anything else named .git (an empty directory, one with only hooks/)
// moves whole: an empty .git breaks every tool that stamps version
// control information (go build), and holds no work.
func keepsWork(c Change) bool {
	return c.Created && c.role == roleDotGit && c.kind.IsDir() && c.Unsure == "" && holdsRepository(c.Path)
}

// holdsRepository reports whether dir, not through a link, holds HEAD,
// objects/ and refs/ among its first entries.
func holdsRepository(dir string) bool {
	f, err := openDirEntries(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	entries, _ := f.ReadDir(4096)
	var g gitNames
	for _, e := range entries {
		g.note(e)
	}
	return g.head && g.objects && g.refs
}

// sanitizeInPlace writes at p, a git config the run created or changed
// whose original is not known, the inert part of the sandbox's version,
// now at moved, and says what it did.
func sanitizeInPlace(w, p, moved string) string {
	b, err := readConfig(moved)
	if err != nil {
		// Too large or unreadable: an inert minimal config in its
		// place keeps the repository working.
		if werr := restoreFile(w, p, 0o644, minimalConfig(p, moved)); werr != nil {
			return fmt.Sprintf("; no config is left in its place (%v; %v): run git init there to make a fresh one", err, werr)
		}
		return fmt.Sprintf("; it could not be read whole (%v), so a minimal config was written in its place (its inert part from the first %d bytes, when readable)", err, maxConfig)
	}
	clean, dropped := SanitizeConfig(b)
	if err := restoreFile(w, p, 0o644, clean); err != nil {
		return fmt.Sprintf("; its inert part could not be written back: %v", err)
	}
	if len(dropped) == 0 {
		return "; its inert part written back"
	}
	return "; its inert part written back, without " + strings.Join(dropped, ", ")
}

// minimalConfig is the config written at p when the one at moved cannot
// be read whole: the inert part of its first maxConfig bytes (cut at the
// last line end) when it is a regular file we can read, with
// core.repositoryformatversion and, for a .git directory of a working
// tree, core.bare = false; otherwise only those.
func minimalConfig(p, moved string) []byte {
	var b []byte
	if f, err := openNoFollow(moved); err == nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			b, _ = io.ReadAll(io.LimitReader(f, maxConfig))
			if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
				b = b[:i+1]
			} else {
				b = nil
			}
		}
		f.Close()
	}
	clean, _ := SanitizeConfig(b)
	head := "[core]\n\trepositoryformatversion = 0\n"
	if filepath.Base(filepath.Dir(p)) == ".git" {
		head += "\tbare = false\n"
	}
	return append([]byte(head), clean...)
}

// readConfig reads a regular file of at most maxConfig bytes, not
// through a link.
func readConfig(p string) ([]byte, error) {
	return readBounded(p, maxConfig) // named.go
}

// rideAlong reports whether p lies inside a control directory (hooks/,
// info/) or a non-.git path that is itself being moved.
func rideAlong(p string, moving map[string]Change) bool {
	for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
		if c, ok := moving[d]; ok && c.kind.IsDir() && c.role != roleDotGit {
			return true
		}
	}
	return false
}

// enclosingDotGit is the .git directory being moved that holds p, if any.
func enclosingDotGit(p string, moving map[string]Change) string {
	for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
		if c, ok := moving[d]; ok && c.role == roleDotGit && c.kind.IsDir() {
			return d
		}
	}
	return ""
}

// moveAside renames p, inside place w, to p+suffix without following a
// link on the way and without replacing anything, and returns the new path.
func moveAside(w, p, suffix string) (string, error) {
	rel, err := filepath.Rel(w, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%s is not inside %s", p, w)
	}
	base := filepath.Base(p)
	for i := 0; i < 100; i++ {
		name := base + suffix
		if i > 0 {
			name = fmt.Sprintf("%s%s.%d", base, suffix, i)
		}
		err := renameNoFollow(w, rel, name)
		if err == nil {
			return filepath.Join(filepath.Dir(p), name), nil
		}
		if !isExist(err) {
			return "", err
		}
	}
	return "", fmt.Errorf("every name like %s%s.N is taken", base, suffix)
}

// NeutraliseNew does for dir, a .git directory inside place that a run
// created and whose moat died before Close, what [Snapshot.Check] would
// have done: when dir is a repository, it stays with its work and only
// its control paths are set aside (its config cut to its inert part);
// otherwise dir moves aside whole. Only paths inside dir are touched.
func NeutraliseNew(place, dir, suffix string) []Finding {
	before := &Snapshot{places: cleanPlaces([]string{place}), paths: map[string]*state{}, incomplete: map[string]string{}}
	before.home, _ = os.UserHomeDir()
	after := &Snapshot{places: before.places, paths: map[string]*state{}, incomplete: map[string]string{}, home: before.home}
	newScanner(after).dotGit(dir)
	var inside []Change
	for _, c := range Diff(before, after) {
		if paths.Under(c.Path, dir) {
			inside = append(inside, c)
		}
	}
	return Neutralise(before, inside, suffix)
}
