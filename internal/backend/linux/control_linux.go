package linux

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Control paths are what lets code written into a project run later,
// outside the sandbox: git hooks, git configuration (core.fsmonitor,
// core.hooksPath, filters), and moat's own .moat-* files. Inside the
// working directory and every writable grant they are bound read-only over
// the writable tree. Landlock cannot take write back inside a writable
// tree, so this needs the mount namespace.

// repoScanDepth is how deep below a writable place nested repositories
// (vendored checkouts, submodules) are looked for.
const repoScanDepth = 3

// repoScanEntries bounds that scan.
const repoScanEntries = 20000

// controlPlan is what protecting the control paths of some writable places
// takes: the paths to bind read-only, and the placeholders created on the
// host so that a path that does not exist yet has something to bind over.
type controlPlan struct {
	places   []string // the writable places; nothing outside them is touched
	readOnly []string
	// pins are the directories between a writable place and its control
	// paths, bound onto themselves so that they are mount points: renaming
	// one (mv .git .git-old, then a fresh .git with hooks) fails with EBUSY.
	pins    []string
	created []string // placeholders, removed by cleanup (deepest first)
	// links are .git entries that are symbolic links: what they lead to
	// is protected, but a mount cannot pin a link, so the sandbox could
	// replace it with a repository of its own.
	links []string
}

// planControlPaths finds the control paths of each writable place and
// creates placeholders for the missing ones: an empty .git/hooks and
// .git/config in a repository that lacks them, and an empty .git in a
// place that is not a repository, so that none can be created during the
// run. Placeholders are removed by cleanup.
func planControlPaths(places []string) (*controlPlan, error) {
	cp := &controlPlan{places: places}
	seen := map[string]bool{}
	for _, w := range places {
		fi, err := os.Stat(w)
		if err != nil || !fi.IsDir() {
			continue
		}
		if err := cp.place(w, seen); err != nil {
			cp.cleanup()
			return nil, err
		}
	}
	return cp, nil
}

func (cp *controlPlan) place(w string, seen map[string]bool) error {
	entries, err := os.ReadDir(w)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".moat-") {
			cp.add(filepath.Join(w, e.Name()), seen)
		}
	}
	git := filepath.Join(w, ".git")
	if _, err := os.Lstat(git); os.IsNotExist(err) {
		// Not a repository: nothing may become one here.
		if err := os.Mkdir(git, 0o755); err != nil {
			return err
		}
		cp.created = append(cp.created, git)
		cp.add(git, seen)
		seen[git] = true // an empty placeholder, not a repository
	}
	budget := repoScanEntries
	return cp.findRepos(w, repoScanDepth, &budget, seen)
}

// findRepos protects every repository at dir or below it, down to depth.
func (cp *controlPlan) findRepos(dir string, depth int, budget *int, seen map[string]bool) error {
	git := filepath.Join(dir, ".git")
	if fi, err := os.Lstat(git); err == nil {
		switch {
		case fi.IsDir():
			if err := cp.gitDir(git, seen); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := cp.gitFile(dir, git, seen); err != nil {
				return err
			}
		case fi.Mode()&os.ModeSymlink != 0 && cp.inPlace(git):
			cp.links = append(cp.links, git)
			if target, err := filepath.EvalSymlinks(git); err == nil {
				if err := cp.gitDir(target, seen); err != nil {
					return err
				}
			}
		}
	}
	if depth == 0 {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	*budget -= len(entries)
	if *budget < 0 {
		return nil
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" && e.Name() != "node_modules" {
			if err := cp.findRepos(filepath.Join(dir, e.Name()), depth-1, budget, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// gitDir protects the hooks and configuration of the git directory g (and
// of its submodules' git directories under g/modules), creating an empty
// hooks directory and config file where they are missing.
func (cp *controlPlan) gitDir(g string, seen map[string]bool) error {
	if seen[g] {
		return nil
	}
	seen[g] = true
	if fi, err := os.Stat(g); err != nil || !fi.IsDir() {
		return nil
	}
	if !cp.inPlace(g) {
		// Outside every writable place the sandbox cannot write it; a
		// worktree's shared directory may still lie inside one.
		if common := readGitPointer(filepath.Join(g, "commondir"), g, false); common != "" {
			return cp.gitDir(common, seen)
		}
		return nil
	}
	hooks := filepath.Join(g, "hooks")
	if _, err := os.Lstat(hooks); os.IsNotExist(err) {
		if err := os.Mkdir(hooks, 0o755); err != nil {
			return err
		}
		cp.created = append(cp.created, hooks)
	}
	cp.add(hooks, seen)
	for _, name := range []string{"config", "config.worktree"} {
		cfg := filepath.Join(g, name)
		_, err := os.Lstat(cfg)
		if os.IsNotExist(err) && name == "config" {
			if err := os.WriteFile(cfg, nil, 0o644); err != nil {
				return err
			}
			cp.created = append(cp.created, cfg)
			err = nil
		}
		if err == nil {
			cp.add(cfg, seen)
		}
	}
	// A worktree's git directory shares hooks and config with the main one.
	if common := readGitPointer(filepath.Join(g, "commondir"), g, false); common != "" {
		if err := cp.gitDir(common, seen); err != nil {
			return err
		}
	}
	return filepath.WalkDir(filepath.Join(g, "modules"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != filepath.Join(g, "modules") {
			if _, err := os.Stat(filepath.Join(p, "HEAD")); err == nil {
				if err := cp.gitDir(p, seen); err != nil {
					return err
				}
				return fs.SkipDir
			}
		}
		return nil
	})
}

// gitFile follows a .git file ("gitdir: PATH", made by worktrees and
// submodules) to its git directory.
func (cp *controlPlan) gitFile(dir, file string, seen map[string]bool) error {
	cp.add(file, seen) // pointing it elsewhere would move the repository
	if g := readGitPointer(file, dir, true); g != "" {
		return cp.gitDir(g, seen)
	}
	return nil
}

// readGitPointer reads a .git file ("gitdir: PATH") or a commondir file
// ("PATH"), resolving a relative path against base.
func readGitPointer(file, base string, prefixed bool) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return ""
	}
	line := strings.TrimSpace(sc.Text())
	if prefixed {
		var ok bool
		if line, ok = strings.CutPrefix(line, "gitdir:"); !ok {
			return ""
		}
		line = strings.TrimSpace(line)
	}
	if line == "" {
		return ""
	}
	if !filepath.IsAbs(line) {
		line = filepath.Join(base, line)
	}
	if resolved, err := filepath.EvalSymlinks(line); err == nil {
		return resolved
	}
	return ""
}

// inPlace reports whether p lies in one of the writable places.
func (cp *controlPlan) inPlace(p string) bool {
	for _, w := range cp.places {
		if isUnder(p, w) {
			return true
		}
	}
	return false
}

func (cp *controlPlan) add(p string, seen map[string]bool) {
	if seen["ro:"+p] || !cp.inPlace(p) {
		return
	}
	seen["ro:"+p] = true
	cp.readOnly = append(cp.readOnly, p)
	for dir := filepath.Dir(p); cp.inPlace(dir) && !cp.isPlace(dir); dir = filepath.Dir(dir) {
		if !seen["pin:"+dir] {
			seen["pin:"+dir] = true
			cp.pins = append(cp.pins, dir)
		}
	}
}

// isPlace reports whether p is one of the writable places (already a
// mount point).
func (cp *controlPlan) isPlace(p string) bool { return slices.Contains(cp.places, p) }

// cleanup removes the placeholders that are still empty, deepest first;
// anything the host wrote into one meanwhile is kept.
func (cp *controlPlan) cleanup() {
	if cp == nil {
		return
	}
	for i := len(cp.created) - 1; i >= 0; i-- {
		p := cp.created[i]
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() || fi.Size() == 0 {
			_ = os.Remove(p) // fails, harmlessly, on a non-empty directory
		}
	}
	cp.created = nil
}
