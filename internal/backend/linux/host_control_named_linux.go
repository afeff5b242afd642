package linux

import (
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/gitguard"
)

// What a repository's configuration and hooks name (internal/gitguard,
// named.go): core.hooksPath, the programs of filters, diff and merge
// drivers, pagers, editors, credential helpers, fsmonitor, the targets of
// hook links and the interpreter a hook execs. Those in a writable place
// are bound read-only like the control files that name them: a hooks
// directory whole (husky's .husky/_ with its parent, whose scripts its
// hooks run), made as a marked placeholder when absent so that no hook
// can be created in it; a program in a Python virtual environment with
// the whole environment (its python imports from site-packages, and a
// .pth file there runs on every start); any other program or hook target
// as a file. What is absent and is not a hooks directory cannot be bound;
// Close checks it (gitguard records every named path at Take).

// gitHookNames are the hooks git runs, for a hooks directory too broad to
// bind whole (one that holds the repository itself).
var gitHookNames = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
	"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
	"fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
	"p4-pre-submit", "post-index-change",
}

// namedIn binds read-only what the git directory g's configuration and
// hooks name inside a writable place; top is its worktree's top when the
// caller knows it, else "".
func (cp *controlPlan) namedIn(g, top string, seen map[string]bool) error {
	if seen["named:"+g+"\x00"+top] {
		return nil
	}
	seen["named:"+g+"\x00"+top] = true
	home, _ := os.UserHomeDir()
	if top == "" {
		top = gitguard.WorktreeTop(g)
	}
	found, _ := gitguard.CollectNamed(g, top, home) // what is past the bounds is reported by gitguard
	for _, n := range found {
		place := cp.placeOf(n.Path)
		if place == "" {
			continue
		}
		if n.Dir {
			if err := cp.hooksDir(gitguard.HooksPathPin(n.Path), place, top, g, seen); err != nil {
				return err
			}
			continue
		}
		if v := gitguard.VenvRoot(n.Path, place); v != "" {
			cp.add(v, seen)
			continue
		}
		fi, err := os.Lstat(n.Path)
		if err != nil {
			continue // absent: Close checks it
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			// A mount cannot pin a link; what it leads to can be.
			if t, err := filepath.EvalSymlinks(n.Path); err == nil && cp.inPlace(t) {
				if v := gitguard.VenvRoot(t, place); v != "" {
					cp.add(v, seen)
				} else {
					cp.add(t, seen)
				}
			}
			continue
		}
		cp.add(n.Path, seen)
	}
	return nil
}

// hooksDir binds the hooks directory d read-only, creating it as a marked
// placeholder when absent. A d that holds the repository itself (a
// hooksPath of ".") is not bound whole: its hooks that exist are.
func (cp *controlPlan) hooksDir(d, place, top, g string, seen map[string]bool) error {
	if isUnder(top, d) || isUnder(g, d) || d == place {
		for _, h := range gitHookNames {
			if p := filepath.Join(d, h); exists(p) {
				cp.add(p, seen)
			}
		}
		return nil
	}
	fi, err := os.Lstat(d)
	switch {
	case err == nil && fi.IsDir():
		cp.add(d, seen)
		return nil
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		if t, err := filepath.EvalSymlinks(d); err == nil && cp.inPlace(t) && !isUnder(top, t) && !isUnder(g, t) {
			cp.add(t, seen) // the link itself is checked at Close
		}
		return nil
	case err == nil:
		return nil // a file: git finds no hooks in it; Close checks it
	case !os.IsNotExist(err):
		return nil
	}
	// Absent: a marked placeholder, each directory made recorded for cleanup.
	var made []string
	for p := d; cp.inPlace(p) && !exists(p); p = filepath.Dir(p) {
		made = append(made, p)
	}
	for i := len(made) - 1; i >= 0; i-- {
		if err := os.Mkdir(made[i], 0o755); err != nil {
			return err
		}
		cp.created = append(cp.created, made[i])
	}
	line := ownerLine()
	marker := filepath.Join(d, placeholderMarker)
	if err := writeNew(marker, line); err != nil {
		return err
	}
	cp.created = append(cp.created, marker)
	cp.marker = line
	cp.add(d, seen)
	return nil
}

// placeOf is the writable place p lies in, or "".
func (cp *controlPlan) placeOf(p string) string {
	for _, w := range cp.places {
		if isUnder(p, w) {
			return w
		}
	}
	return ""
}
