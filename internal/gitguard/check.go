package gitguard

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Change is one control path that differs between two snapshots.
type Change struct {
	// Path is the control path.
	Path string
	// Created is true for a path that did not exist before; otherwise it
	// was changed (content, mode, type, or replaced by another file).
	Created bool
	role    role
	kind    fs.FileMode
	old     *state
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
		case b.differs(a):
			out = append(out, Change{Path: p, role: a.role, kind: a.kind, old: b})
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
// original content of a regular file it had kept. A path inside a control
// directory that moves too (hooks/x when hooks/ is new) moves with it and
// is not listed on its own; the control files inside a new .git directory
// are renamed inside it, so that the moved directory is no repository git
// would read either, and listed with it. Links are never followed.
func Neutralise(before *Snapshot, changes []Change, suffix string) []Finding {
	moving := map[string]Change{}
	for _, c := range changes {
		moving[c.Path] = c
	}
	var out []Finding
	folded := map[string][]string{} // a moved .git -> what moved inside it
	for _, c := range changes {
		if rideAlong(c.Path, moving) {
			continue
		}
		w := before.placeOf(c.Path)
		if w == "" {
			continue
		}
		f := Finding{Path: c.Path}
		what := "created by the sandbox"
		if !c.Created {
			what = "changed by the sandbox"
		}
		moved, err := moveAside(w, c.Path, suffix)
		if err != nil {
			f.Detail = fmt.Sprintf("%s, and could not be moved aside: %v; remove it before running git here", what, err)
			out = append(out, f)
			continue
		}
		f.MovedTo = moved
		f.Detail = what + "; moved to " + moved
		if c.old != nil && (c.old.kept && c.old.kind == 0 || c.old.kind&fs.ModeSymlink != 0) {
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
		}
		if g := enclosingDotGit(c.Path, moving); g != "" {
			folded[g] = append(folded[g], strings.TrimPrefix(c.Path, g+"/"))
			continue
		}
		out = append(out, f)
	}
	for i, f := range out {
		if inner := folded[f.Path]; len(inner) > 0 {
			sort.Strings(inner)
			out[i].Detail += fmt.Sprintf(" (a repository: inside it %s renamed with the same suffix, so git reads none of it)", strings.Join(inner, ", "))
		}
	}
	return out
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
