package workdircheck

import (
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/paths"
)

// StatePlaces refuses a working directory, a home or a grant that is
// moat's per-user state directory root or lies inside it ("" for a place
// not given). That directory holds the run journals, the quarantine, the
// record of the places sandboxes could write and the files the user
// trusted: a sandbox that could write it could erase the record of what
// it may have written, or forge a pin. A place that holds it (a grant of
// the home) is fine: every view hides the state directory
// (moat's protectStateRoot).
func StatePlaces(root, workDir, home string, grants []string) error {
	return places(root, workDir, home, grants, "lies in moat's state directory "+root+", which holds the run journals, the quarantine and the files you trusted; no sandbox may see it")
}

// places refuses a working directory, a home or a grant that is root or
// lies in it, with problem.
func places(root, workDir, home string, grants []string, problem string) error {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	check := func(subject, p string) error {
		if p == "" {
			return nil
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil // the place's own check says why
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		if paths.Under(abs, root) {
			return &Error{Subject: subject, Path: p, Problem: problem}
		}
		return nil
	}
	if err := check("workdir", workDir); err != nil {
		return err
	}
	if err := check("home", home); err != nil {
		return err
	}
	for _, g := range grants {
		if err := check("grant", g); err != nil {
			return err
		}
	}
	return nil
}

// ServePlaces refuses a working directory, a home or a grant that is one of
// dirs (where "moat serve" puts its socket: statedir.ServeRuntimeDirs) or
// lies inside one. A place that holds one (a grant of the runtime
// directory) is fine: every view hides them (moat's protectStateRoot).
func ServePlaces(dirs []string, workDir, home string, grants []string) error {
	for _, d := range dirs {
		if err := places(d, workDir, home, grants, "lies in "+d+", where moat serve keeps its socket; a sandbox that could write there could listen in the server's place; no sandbox may see it"); err != nil {
			return err
		}
	}
	return nil
}
