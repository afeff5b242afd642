// Package gitguard finds, in the places a sandbox may write, every file
// that makes the host's git read configuration, run hooks or run programs
// from elsewhere, and undoes, loudly, what a sandbox run created or
// changed there.
//
// No kernel mechanism stops a sandbox from creating a repository in a
// directory it may write (sub/.git, a .git file pointing at a hidden git
// directory, a bare repository anywhere), nor from adding a commondir or
// an info/attributes file next to the read-only bound config and hooks. So
// the sandbox takes a [Snapshot] before its first command and, once every
// sandboxed process is dead, calls [Snapshot.Check]: each control path the
// run created or changed is renamed aside with a suffix naming the sandbox,
// a changed file's original content is put back, and each is reported.
// Nothing is deleted, and no symbolic link is followed.
//
// What counts as a control path (see gitrepository-layout(5) and
// git-config(1)), for every git directory found in a writable place: a
// ".git" entry in a tree (directory, "gitdir:" file or link), and a
// directory git accepts as a repository (HEAD plus objects/ and refs/, or
// plus commondir: a bare repository, a separate git directory, a
// submodule's modules/NAME, a worktree's worktrees/ID); inside each git
// directory config, config.worktree (both can set core.fsmonitor,
// core.hooksPath, core.pager, aliases, filter and diff drivers), commondir
// (redirects config and hooks to another directory), gitdir (a worktree's
// back pointer), hooks/ and everything in it, info/ and everything in it
// (info/attributes selects filter, diff and merge drivers for every path);
// and every file named by include.path or includeIf.*.path in any of those
// configs, when it lies in a writable place. The rest of a git directory
// is data: objects, refs, logs, index, HEAD, packed-refs; objects/info/
// alternates and the legacy branches/ and remotes/ name objects and URLs,
// never commands (git refuses the ext:: transport by default).
//
// A repository the run created keeps its work: its objects, refs, index
// and history stay, only its control paths move, and its config is
// replaced by its inert keys (sanitize.go). Every read is bounded
// (budget.go): names, directories, hashed bytes and includes each have a
// budget, includes and inodes are read once, and what a budget leaves
// unread is compared by its stat fingerprint (fingerprint.go), treated as
// changed, or reported, never taken for clean.
//
// Besides git's, the top of each place holds the control files of other
// tools, listed in internal/controlfiles (names.go).
//
// Files of the working tree are not git control paths, because they cannot
// name a command: .gitattributes only selects drivers that a config
// defines, .gitmodules' "update = !command" is refused by git (since
// 2.24.1, CVE-2019-19604), and .gitignore and .mailmap hold patterns and
// names. They are ordinary project files that a sandbox edits on purpose.
package gitguard

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/moat-sandbox/moat/internal/paths"
)

// ControlNames are the entries of a git directory that are control paths
// (see the package comment); hooks and info with everything in them, and
// the state of an interactive rebase or a cherry-pick sequence (their
// todo lists hold "exec COMMAND" lines that git rebase --continue runs).
// The Linux backend binds the same entries read-only at start.
var ControlNames = []string{"config", "config.worktree", "commondir", "gitdir", "hooks", "info", "rebase-merge", "sequencer"}

// isControlTree reports whether name, one of ControlNames, is a directory
// whose content is control paths too.
func isControlTree(name string) bool {
	return name == "hooks" || name == "info" || name == "rebase-merge" || name == "sequencer"
}

// ConfigNames are the entries of a git directory that are config files,
// whose include.path and includeIf.*.path are followed.
var ConfigNames = []string{"config", "config.worktree"}

// maxDepth bounds how deep below a place the scan goes: PATH_MAX allows
// about 2000 levels of one-letter names, and the entry budget bounds the
// cost, so a sandbox cannot bury a repository below the scan cheaply.
const maxDepth = 2048

// maxHash bounds the bytes of one file that are hashed; maxKeep those kept
// to restore a file the sandbox changed.
const (
	maxHash = 16 << 20
	maxKeep = 256 << 10
)

// maxIncludeDepth bounds how many include levels are followed (git's own
// limit is 10).
const maxIncludeDepth = 10

type role uint8

const (
	roleDotGit   role = iota + 1 // a .git entry in a working tree
	roleControl                  // a control file or directory of a git directory
	roleTree                     // a control directory's content (hooks/*, info/*)
	roleInclude                  // a file included from a repository's config
	roleInstruct                 // a file that instructs a host agent: reported, not moved
	roleNamed                    // a program or hooks directory a repository's config or hooks name (named.go)
)

// state is what a control path was at one moment.
type state struct {
	role    role
	info    os.FileInfo
	kind    fs.FileMode // the type bits
	perm    fs.FileMode
	link    string
	sum     [sha256.Size]byte
	content []byte // a small regular file's content, to restore it
	kept    bool
	// unsure says why the path could not be fully examined (too large to
	// hash, past a budget, includes not all followed); such a path is
	// treated as changed, never as clean, unless rescuable and its
	// fingerprint (fingerprint.go) shows it untouched.
	unsure    string
	rescuable bool
	// print is the stat fingerprint; treeSum that of everything below a
	// control directory too large to compare by content.
	print       fingerprint
	printed     bool
	treeSum     [sha256.Size]byte
	treePrinted bool
}

// differs reports whether a, taken before the run at taken, and b, after
// it, differ. A path that could not be compared by content is compared by
// its fingerprint, and only when the cause allows it (rescuable).
func (a *state) differs(b *state, taken time.Time) bool {
	if a.unsure != "" || b.unsure != "" {
		return !(a.rescuable && a.settled(taken) && samePrint(a, b))
	}
	if a.kind != b.kind || !os.SameFile(a.info, b.info) {
		return true
	}
	switch {
	case a.kind == 0:
		return a.sum != b.sum || a.perm != b.perm
	case a.kind&fs.ModeSymlink != 0:
		return a.link != b.link
	}
	return false
}

// Snapshot is the state of the git control paths of some writable places
// at one moment. The zero value holds no places; Check on it finds nothing.
type Snapshot struct {
	places []string
	taken  time.Time
	paths  map[string]*state
	// incomplete maps a place to why part of it was not examined.
	incomplete map[string]string
	home       string
	// repaired lists directories the run had made unreadable, which the
	// check made readable again to examine them.
	repaired []string
	// startDirs is how many directories Take opened; startCut whether
	// its directory budget ran out; creatable what SetCreatable gave.
	startDirs int
	startCut  bool
	creatable int64
	// named are the paths in a place that repositories' configuration
	// and hooks named at Take (named.go); Close looks at them again.
	named []Named
	// namedGaps says, per git directory, what of its configuration and
	// hooks was past the bounds at Take.
	namedGaps map[string]string
}

// Take examines places (absolute directories; others are ignored) and
// records the state of every git control path in them.
func Take(places []string) *Snapshot {
	s := &Snapshot{taken: time.Now(), paths: map[string]*state{}, incomplete: map[string]string{}}
	s.home, _ = os.UserHomeDir()
	s.places = cleanPlaces(places)
	sc := newScanner(s)
	for _, p := range s.places {
		sc.place(p)
	}
	s.startDirs, s.startCut = sc.dirLimit-sc.dirs, sc.dirs < 0
	return s
}

// takeAfter examines the places of before again, once the run is over.
// Unlike Take it makes readable the directories of ours that the run made
// unreadable (a chmod 0311 would hide a repository from the scan), and it
// looks again at every path before recorded, wherever the walk went, so
// that nothing the walk missed escapes the comparison.
func takeAfter(before *Snapshot) *Snapshot {
	s := &Snapshot{taken: time.Now(), paths: map[string]*state{}, incomplete: map[string]string{}}
	s.home = before.home
	s.places = before.places
	sc := newScanner(s)
	sc.dirs, sc.dirLimit = before.afterDirs(), before.afterDirs()
	s.startDirs = before.startDirs
	sc.repair = true
	for _, p := range s.places {
		sc.place(p)
	}
	for p, st := range before.paths {
		if _, ok := s.paths[p]; !ok {
			sc.record(p, st.role)
		}
	}
	for _, n := range before.named { // named_scan.go
		sc.recordNamed(n)
	}
	return s
}

// cleanPlaces keeps the absolute, distinct places that are not inside
// another one.
func cleanPlaces(places []string) []string {
	var out []string
	for _, p := range places {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		out = append(out, filepath.Clean(p))
	}
	sort.Strings(out)
	var kept []string
	for _, p := range out {
		inside := false
		for _, q := range kept {
			if paths.Under(p, q) {
				inside = true
				break
			}
		}
		if !inside {
			kept = append(kept, p)
		}
	}
	return kept
}

func (s *Snapshot) placeOf(p string) string {
	for _, w := range s.places {
		if paths.Under(p, w) {
			return w
		}
	}
	return ""
}

// Paths returns the control paths that existed when s was taken, sorted;
// files that only instruct a host agent (AGENTS.md, ...) are recorded to
// report changes, but are not control paths to pin.
func (s *Snapshot) Paths() []string {
	out := make([]string, 0, len(s.paths))
	for p, st := range s.paths {
		if st.role != roleInstruct {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

type scanner struct {
	s        *Snapshot
	budget   int // names left to read (budget.go)
	dirs     int // directories left to open
	dirLimit int // of dirBudget
	gitDirs  map[string]bool
	// hashLeft is the bytes left to hash; hashed what each inode read gave.
	hashLeft int64
	hashed   map[fileID]*hashed
	// includesLeft is the include files left to follow; included those
	// already followed.
	includesLeft int
	included     map[string]bool
	// repair makes directories of ours that cannot be read readable
	// (owner rwx added) before reading them.
	repair bool
}

func newScanner(s *Snapshot) *scanner {
	return &scanner{
		s: s, budget: entryBudget, dirs: dirBudget, dirLimit: dirBudget, gitDirs: map[string]bool{},
		hashLeft: hashBudget, hashed: map[fileID]*hashed{},
		includesLeft: includeBudget, included: map[string]bool{},
	}
}

// place walks one writable place breadth first, so that what lies near
// its top (where a shell prompt runs git on a plain cd) is examined first.
// It reads names and types only (no stat), a chunk at a time: only a
// control name costs more.
func (sc *scanner) place(root string) {
	fi, err := os.Lstat(root)
	if err != nil || !fi.IsDir() {
		return
	}
	type item struct {
		dir   string
		depth int
	}
	queue := []item{{root, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if !sc.spendDir(root) {
			return
		}
		f, err := openDirEntries(it.dir) // never a FIFO or a link swapped in since it was listed
		if err != nil && sc.repair && errors.Is(err, fs.ErrPermission) && makeReadable(it.dir) {
			sc.s.repaired = append(sc.s.repaired, it.dir)
			f, err = openDirEntries(it.dir)
		}
		var git gitNames
		var subdirs []string
		for err == nil {
			var entries []fs.DirEntry
			entries, err = f.ReadDir(1024)
			if !sc.spend(root, len(entries)) {
				f.Close()
				return
			}
			for _, e := range entries {
				name := e.Name()
				git.note(e)
				p := filepath.Join(it.dir, name)
				if it.depth == 0 {
					sc.topEntry(it.dir, name, e.IsDir()) // names.go
				}
				if name == ".git" {
					sc.dotGit(p)
					continue
				}
				if e.Type().IsDir() && len(subdirs) <= sc.dirs { // d_type: a link to a directory is not followed
					subdirs = append(subdirs, name)
				}
			}
		}
		if f != nil {
			f.Close()
		}
		if err != nil && err != io.EOF {
			if _, ok := sc.s.incomplete[root]; !ok {
				sc.s.incomplete[root] = fmt.Sprintf("%s could not be read (%v): what it holds was not checked for repositories", it.dir, unwrap(err))
			}
			continue
		}
		gitLike := git.gitDir()
		if gitLike {
			// A bare repository, or a decoy: either way its own
			// subdirectories may hold further repositories, so the walk
			// goes on below it (all but its object store).
			sc.gitDir(it.dir, 0)
		}
		for _, name := range subdirs {
			if gitLike && name == "objects" {
				continue
			}
			p := filepath.Join(it.dir, name)
			if it.depth >= maxDepth {
				sc.s.incomplete[root] = fmt.Sprintf("%s is more than %d levels deep: what it holds was not checked for repositories", p, maxDepth)
				continue
			}
			if len(queue) >= sc.dirs {
				// Never opened: the directory budget would end first.
				sc.cutDirs(root)
				break
			}
			queue = append(queue, item{p, it.depth + 1})
		}
	}
}

func unwrap(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// gitNames notes the entries that make a directory a git directory.
type gitNames struct{ head, objects, refs, common bool }

func (g *gitNames) note(e fs.DirEntry) {
	switch e.Name() {
	case "HEAD":
		g.head = !e.IsDir()
	case "objects":
		g.objects = true
	case "refs":
		g.refs = true
	case "commondir":
		g.common = true
	}
}

func (g *gitNames) gitDir() bool { return g.head && (g.common || g.objects && g.refs) }

// LooksLikeGitDir reports whether a directory with these entries is one
// git accepts as a git directory: HEAD, and objects/ with refs/ or a
// commondir naming where they are.
func LooksLikeGitDir(entries []fs.DirEntry) bool {
	var g gitNames
	for _, e := range entries {
		g.note(e)
	}
	return g.gitDir()
}

// record notes the state of p, if it exists and lies in a place.
func (sc *scanner) record(p string, r role) (*state, bool) {
	if sc.s.placeOf(p) == "" {
		return nil, false
	}
	if st, ok := sc.s.paths[p]; ok {
		return st, true
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, false
	}
	st := &state{role: r, info: fi, kind: fi.Mode().Type(), perm: fi.Mode().Perm()}
	st.print, st.printed = statPrint(fi)
	switch {
	case fi.Mode().IsRegular():
		keep := maxKeep
		config := r == roleInclude || r == roleControl && isConfigName(filepath.Base(p))
		if config {
			// Kept whole (the hash budget bounds it) to follow its
			// includes and to put it back if the run changes it.
			keep = maxHash
		}
		sc.hashFile(p, fi, st, keep) // budget.go
		if config && !st.kept && st.unsure != "" && !strings.HasPrefix(st.unsure, "could not be read") {
			// Its includes were not followed: its fingerprint does
			// not stand for what they hold. (One no one can read,
			// git cannot read either.)
			st.unsure += ", and its includes were not followed"
			st.rescuable = false
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		st.link, _ = os.Readlink(p)
	}
	sc.s.paths[p] = st
	return st, true
}

// limitedBuffer keeps up to max bytes and notes whether more came.
type limitedBuffer struct {
	b    []byte
	max  int
	over bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b)+len(p) > l.max {
		l.over = true
	} else {
		l.b = append(l.b, p...)
	}
	return len(p), nil
}

// dotGit records a .git entry of a working tree and the git directory it
// is or names.
func (sc *scanner) dotGit(p string) {
	st, ok := sc.record(p, roleDotGit)
	if !ok {
		return
	}
	dir := filepath.Dir(p)
	switch {
	case st.kind.IsDir():
		sc.gitDir(p, 0)
	case st.kind == 0:
		if target, ok := ParseGitFile(st.content); ok {
			g := resolve(dir, target)
			sc.gitDir(g, 0)
			if sc.s.placeOf(g) == "" && !sc.repair {
				sc.namedIn(g, dir) // named_scan.go: a git directory elsewhere can name paths here
			}
		}
	case st.kind&fs.ModeSymlink != 0:
		// Not followed: what it names is examined only if it lies in a
		// place, where the walk or a pointer reaches it.
		if st.link != "" {
			if t := resolve(dir, st.link); sc.s.placeOf(t) != "" {
				sc.gitDir(t, 0)
			}
		}
	}
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// gitDir records the control paths of the git directory g, and follows
// its commondir, worktrees and submodules.
func (sc *scanner) gitDir(g string, depth int) {
	if sc.gitDirs[g] || depth > 8 || sc.s.placeOf(g) == "" {
		return
	}
	sc.gitDirs[g] = true
	if fi, err := os.Lstat(g); err != nil || !fi.IsDir() {
		return
	}
	for _, name := range ControlNames {
		if isControlTree(name) {
			sc.tree(filepath.Join(g, name), 0)
		} else {
			sc.record(filepath.Join(g, name), roleControl)
		}
	}
	for _, name := range ConfigNames {
		if st, ok := sc.s.paths[filepath.Join(g, name)]; ok {
			sc.includes(filepath.Join(g, name), st, 0)
		}
	}
	if st, ok := sc.s.paths[filepath.Join(g, "commondir")]; ok && st.kind == 0 {
		if target, ok := ParseCommondir(st.content); ok {
			sc.gitDir(resolve(g, target), depth+1)
		}
	}
	if entries, ok := sc.readSmallDir(filepath.Join(g, "worktrees")); ok {
		for _, e := range entries {
			if e.Type().IsDir() {
				sc.gitDir(filepath.Join(g, "worktrees", e.Name()), depth+1)
			}
		}
	}
	sc.modules(filepath.Join(g, "modules"), depth, 0)
	if !sc.repair {
		sc.namedIn(g, "") // named_scan.go: at Take only; Close looks at the same paths
	}
}

// tree records a control directory and everything in it.
func (sc *scanner) tree(p string, level int) {
	r := roleControl
	if level > 0 {
		r = roleTree
	}
	st, ok := sc.record(p, r)
	if !ok || !st.kind.IsDir() || level > 4 {
		return
	}
	entries, ok := sc.readSmallDir(p)
	if !ok {
		if st.unsure == "" {
			st.unsure = fmt.Sprintf("more than %d entries, or unreadable, so what it holds was not compared", maxSmallDir)
			st.treeSum, st.treePrinted = sc.printTree(p)
			st.rescuable = true
		}
		return
	}
	for _, e := range entries {
		sc.tree(filepath.Join(p, e.Name()), level+1)
	}
}

// modules finds the submodules' git directories under a git directory's
// modules/ (a submodule's name may hold slashes, and submodules nest).
func (sc *scanner) modules(dir string, depth, level int) {
	if level > 8 {
		return
	}
	entries, ok := sc.readSmallDir(dir)
	if !ok {
		if _, err := os.Lstat(dir); err == nil {
			sc.cut(sc.s.placeOf(dir), fmt.Sprintf("%s holds more than %d entries", dir, maxSmallDir))
		}
		return
	}
	if level > 0 && LooksLikeGitDir(entries) {
		sc.gitDir(dir, depth+1)
		return
	}
	for _, e := range entries {
		if e.Type().IsDir() {
			sc.modules(filepath.Join(dir, e.Name()), depth, level+1)
		}
	}
}

// includes records the files a config file includes that lie in a place,
// each at most once per snapshot, at most maxIncludeDepth levels deep and
// includeBudget files in all. A config whose includes could not all be
// followed is marked unsure, and so set aside at Close.
func (sc *scanner) includes(file string, st *state, level int) {
	if st.kind != 0 || !st.kept {
		return
	}
	sc.included[file] = true
	if level >= maxIncludeDepth {
		st.unsure = fmt.Sprintf("includes nested more than %d levels deep", maxIncludeDepth)
		st.rescuable = false
		return
	}
	for _, inc := range ParseIncludes(st.content) {
		p, ok := ResolveInclude(file, inc, sc.s.home)
		if !ok || sc.included[p] {
			continue
		}
		sc.included[p] = true
		if sc.includesLeft--; sc.includesLeft < 0 {
			st.unsure = fmt.Sprintf("more than %d include files, so not all were followed", includeBudget)
			st.rescuable = false
			return
		}
		if ist, ok := sc.record(p, roleInclude); ok {
			sc.includes(p, ist, level+1)
		}
	}
}

// ResolveInclude turns the value of an include.path or includeIf.*.path
// in the config file named file into the path git reads: "~/" is the
// home, a relative path is relative to file's directory. It reports false
// for what it cannot place ("~user/", "%(prefix)/", an empty home).
func ResolveInclude(file, inc, home string) (string, bool) {
	switch {
	case inc == "":
		return "", false
	case strings.HasPrefix(inc, "~/"):
		if home == "" {
			return "", false
		}
		return filepath.Join(home, inc[2:]), true
	case strings.HasPrefix(inc, "~"), strings.HasPrefix(inc, "%(prefix)/"):
		return "", false
	}
	return resolve(filepath.Dir(file), inc), true
}

// isConfigName reports whether name is one of ConfigNames.
func isConfigName(name string) bool { return name == "config" || name == "config.worktree" }

// maxSmallDir bounds the entries of a directory inside a git directory or
// a control directory (hooks/, worktrees/, modules/, .vscode/, ...) that
// the scan reads one by one; a larger one is not listed in memory.
const maxSmallDir = 4096

// readSmallDir lists dir, not through a link, spending the name budget,
// and reports false when it cannot be read, holds more than maxSmallDir
// entries, or the budget is spent.
func (sc *scanner) readSmallDir(dir string) ([]fs.DirEntry, bool) {
	f, err := openDirEntries(dir)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	entries, err := f.ReadDir(maxSmallDir + 1)
	if err != nil && err != io.EOF || len(entries) > maxSmallDir || !sc.spend(sc.s.placeOf(dir), len(entries)) {
		return nil, false
	}
	return entries, true
}
