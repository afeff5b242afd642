package linux

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/moat-sandbox/moat/internal/controlfiles"
	"github.com/moat-sandbox/moat/internal/gitguard"
	"golang.org/x/sys/unix"
)

// Control paths are what lets code written into a project run later,
// outside the sandbox: git hooks, git configuration (core.fsmonitor,
// core.hooksPath, filters), whatever redirects git to other hooks and
// configuration, and moat's own .moat-* files. Inside the working
// directory and every writable grant, those that exist at start are bound
// read-only over the writable tree. Landlock cannot take write back inside
// a writable tree, so this needs the mount namespace.
//
// Bound read-only, for every git directory found (a .git directory, the
// target of a .git file, a bare repository, the place itself when it is
// one, submodules under modules/, worktrees under worktrees/): hooks/,
// config, config.worktree, commondir, gitdir, info/ (attributes select
// filter and diff drivers), the .git file itself, and every file that
// include.path or includeIf.*.path names inside a writable place. See
// internal/gitguard for why this is the whole list and why working-tree
// files (.gitattributes, .gitmodules) are not in it.
//
// What does not exist at start cannot be bound, and nothing stops its
// creation: a new repository in a subdirectory, a commondir or info/ added
// to an existing git directory. Those are the close-time check's
// (internal/gitguard, run by Sandbox.Close): moved aside and reported. The
// only placeholders are an empty hooks/ and config in a repository that
// lacks them, so that the most common two cannot be created during the
// run; each carries a marker naming its owner, and a later run sweeps
// those whose owner is dead. A place that is not a repository gets no
// placeholder .git: an empty .git breaks every tool that stamps version
// control information (go build).

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
	marker  string   // the line each placeholder file holds
	// links are .git entries that are symbolic links: what they lead to
	// is protected, but a mount cannot pin a link, so the sandbox could
	// replace it with a repository of its own.
	links []string
}

// planControlPaths finds the control paths of each writable place and
// creates placeholders for the missing hooks/ and config of a repository,
// so that they cannot be created during the run. Placeholders are removed
// by cleanup.
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
		if gitguard.IsControlName(e.Name()) { // internal/controlfiles: .envrc, .vscode, .moat-*, ...
			cp.add(filepath.Join(w, e.Name()), seen)
		}
	}
	for _, rel := range controlfiles.NestedRunsCode() { // .cargo/config.toml
		if p := filepath.Join(w, rel); exists(p) {
			cp.add(p, seen)
		}
	}
	budget := repoScanEntries
	return cp.findRepos(w, repoScanDepth, &budget, seen)
}

// findRepos protects every repository at dir or below it, down to depth.
func (cp *controlPlan) findRepos(dir string, depth int, budget *int, seen map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	if gitguard.LooksLikeGitDir(entries) {
		// A bare repository (the place itself, say, where a push runs
		// hooks/pre-receive) or a separate git directory.
		return cp.gitDir(dir, seen)
	}
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

// gitDir protects the control paths of the git directory g and of the git
// directories it leads to (its commondir, worktrees/*, modules/*),
// creating a marked, empty hooks directory and config file where a
// repository's own (not a linked worktree's) are missing.
func (cp *controlPlan) gitDir(g string, seen map[string]bool) error {
	if seen[g] {
		return nil
	}
	seen[g] = true
	if fi, err := os.Stat(g); err != nil || !fi.IsDir() {
		return nil
	}
	common := readGitPointer(filepath.Join(g, "commondir"), g, false)
	// What its config and hooks name may lie in a place even when g does
	// not (host_control_named_linux.go).
	if err := cp.namedIn(g, "", seen); err != nil {
		return err
	}
	if !cp.inPlace(g) {
		// Outside every writable place the sandbox cannot write it; a
		// worktree's shared directory may still lie inside one.
		if common != "" {
			return cp.gitDir(common, seen)
		}
		return nil
	}
	// Placeholders only in a real repository's own git directory: not in
	// a linked worktree's (its hooks and config are the common one's),
	// nor in something without HEAD that git would not take for one.
	if !exists(filepath.Join(g, "commondir")) && exists(filepath.Join(g, "HEAD")) {
		if err := cp.placeholders(g); err != nil {
			return err
		}
	}
	for _, name := range gitguard.ControlNames {
		if p := filepath.Join(g, name); exists(p) {
			cp.add(p, seen)
		}
	}
	for _, name := range gitguard.ConfigNames {
		cp.includes(filepath.Join(g, name), seen, 0)
	}
	// A worktree's git directory shares hooks and config with the main one.
	if common != "" {
		if err := cp.gitDir(common, seen); err != nil {
			return err
		}
	}
	if entries, err := os.ReadDir(filepath.Join(g, "worktrees")); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				if err := cp.gitDir(filepath.Join(g, "worktrees", e.Name()), seen); err != nil {
					return err
				}
			}
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

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// includes protects the files that the config file names with include.path
// or includeIf.*.path, where they lie in a writable place, and the files
// those include in turn.
func (cp *controlPlan) includes(file string, seen map[string]bool, level int) {
	if level >= 10 {
		return
	}
	b, err := readControlFile(file, 1<<20)
	if err != nil {
		return
	}
	home, _ := os.UserHomeDir()
	for _, inc := range gitguard.ParseIncludes(b) {
		p, ok := gitguard.ResolveInclude(file, inc, home)
		if !ok || !cp.inPlace(p) || !exists(p) || seen["inc:"+p] {
			continue
		}
		seen["inc:"+p] = true
		cp.add(p, seen)
		cp.includes(p, seen, level+1)
	}
}

// gitFile follows a .git file ("gitdir: PATH", made by worktrees and
// submodules) to its git directory.
func (cp *controlPlan) gitFile(dir, file string, seen map[string]bool) error {
	cp.add(file, seen) // pointing it elsewhere would move the repository
	if g := readGitPointer(file, dir, true); g != "" {
		if err := cp.namedIn(g, dir, seen); err != nil {
			return err
		}
		return cp.gitDir(g, seen)
	}
	return nil
}

// readGitPointer reads a .git file ("gitdir: PATH") or a commondir file
// ("PATH"), resolving a relative path against base.
func readGitPointer(file, base string, prefixed bool) string {
	b, err := readControlFile(file, 64<<10)
	if err != nil {
		return ""
	}
	var line string
	var ok bool
	if prefixed {
		line, ok = gitguard.ParseGitFile(b)
	} else {
		line, ok = gitguard.ParseCommondir(b)
	}
	if !ok {
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

// cleanup removes the placeholders that still hold only their marker,
// deepest first; anything the host wrote into one meanwhile is kept.
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
		if fi.IsDir() {
			_ = os.Remove(p) // fails, harmlessly, on a non-empty directory
			continue
		}
		if b, ok := readSmall(p); ok && string(b) == cp.marker {
			_ = os.Remove(p)
		}
	}
	cp.created = nil
}

// readControlFile reads file, a control file a sandbox may have made or
// replaced (a concurrent run's, in the same place), as hostile: not
// through a link in its last component, never blocking on a FIFO, a
// regular file of at most max bytes.
func readControlFile(file string, max int64) ([]byte, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, fs.ErrInvalid
	}
	return io.ReadAll(io.LimitReader(f, max))
}
