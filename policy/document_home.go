package policy

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/fspattern"
	"github.com/moat-sandbox/moat/internal/homecontrol"
	"github.com/moat-sandbox/moat/internal/paths"
)

// The home of moat exec. A policy document's ~ is the user's home, and so
// is the command's $HOME: the home is granted read-only (moat's
// protections still hide its secrets), and only the writable patterns
// make parts of it writable. Where they do, the home's run-code entries
// (internal/homecontrol) stay read-only unless a pattern names one
// exactly: an existing one is bound read-only, a missing one is denied,
// which on Linux puts a marked placeholder there for the run (the
// mechanism of missing denied paths), so that it cannot be created. At
// the top of a writable cwd, the missing control names (.git, .agents,
// .pi, the fragment files) are denied the same way, rather than moved
// aside at Close.

// execCwdControlNames are the control names at the top of the cwd whose
// creation moat exec blocks up front: fspattern's, and Heimdall's local
// fragment (and moat's name for it). On Linux a missing .git gets a file
// placeholder, not a directory, so that go build and git do not take the
// cwd for a repository (internal/backend/linux: fileGuardNames).
var execCwdControlNames = append(slices.Clone(fspattern.ProtectedNames), ".heimdall-local", ".moat-local")

// maxHomeLinks bounds the symbolic links followed on the way to one
// run-code entry.
const maxHomeLinks = 16

// applyExecHome makes home the command's home in cfg, after the
// filesystem patterns are applied: a read grant of it (unless a grant of
// it, or a deny of it or above it, is there already), HOME set to it
// (unless the document sets HOME), and the run-code entries and the cwd's
// control names guarded. home must be absolute and an existing directory
// the user can list; otherwise the sandbox keeps a private home and only
// the cwd's control names are guarded. grantPaths are the paths of the
// document's grants, which name places as literal patterns do.
//
// Where the home itself is writable (writable: ["~"], or the cwd is the
// home), it is sealed: no entry can be created at its top, removed or
// renamed during the run, its existing entries keep their rights. Every
// hidden entry at its top (~/.NAME) that no pattern opens (hiddenOpeners)
// is then read-only whole; a missing one needs nothing more, since the
// seal stops its creation, so no placeholder is made in the home.
func applyExecHome(cfg *moat.Config, home, cwd string, environ, writable, grantPaths []string, setHome bool) error {
	real := ""
	if filepath.IsAbs(home) {
		if r, err := filepath.EvalSymlinks(home); err == nil {
			if fi, err := os.Stat(r); err == nil && fi.IsDir() && canList(r) {
				real = r
			}
		}
	}
	named := namedWritable(append(slices.Clip(writable), grantPaths...), cwd, cmp.Or(real, home))
	var sealed []string
	if real != "" {
		if err := grantHome(cfg, real); err != nil {
			return err
		}
		if setHome {
			cfg.Env.Set = append([]string{"HOME=" + filepath.Clean(home)}, cfg.Env.Set...)
		}
		opens := hiddenOpeners(append(slices.Clip(writable), grantPaths...), cwd, filepath.Clean(home), real)
		keepHiddenGrantsReadOnly(cfg, real, opens)
		pathEnv, _ := lookupEnviron(environ, "PATH")
		entries := homecontrol.Paths(filepath.Clean(home), pathEnv)
		if real != filepath.Clean(home) {
			entries = append(entries, homecontrol.Paths(real, pathEnv)...)
		}
		keepControlGrantsReadOnly(cfg, entries, named)
		g := newWritableGuard(cfg, named)
		if g.writable(real) {
			g.seal = append(g.seal, real)
			sealed = append(sealed, real)
			top, err := os.ReadDir(real)
			if err != nil {
				return fmt.Errorf("filesystem policy: home %s: %w", quoteOdd(real), unwrapPath(err))
			}
			for _, e := range top {
				t := e.Type()
				if !strings.HasPrefix(e.Name(), ".") || opens.match(e.Name()) || !(t.IsDir() || t.IsRegular() || t&fs.ModeSymlink != 0) {
					continue // sockets and the like cannot be swapped: the seal holds them
				}
				if err := g.guard(filepath.Join(real, e.Name()), 0); err != nil {
					return fmt.Errorf("filesystem policy: home entry %s: %w", quoteOdd(filepath.Join(real, e.Name())), err)
				}
			}
		}
		for _, e := range entries {
			if err := g.guard(e, 0); err != nil {
				return fmt.Errorf("filesystem policy: home entry %s: %w", quoteOdd(e), err)
			}
		}
		g.apply(cfg)
	}
	guardCwdControls(cfg, cwd, named, sealed)
	return nil
}

// grantHome adds a read grant of home unless a grant of it or of a
// directory above it is there (a writable pattern "~" or an ancestor, the
// cwd), whose access stands, or a deny covers it.
func grantHome(cfg *moat.Config, home string) error {
	for _, g := range cfg.Grants {
		if g.Path == home || under(home, g.Path) {
			return nil
		}
	}
	for _, d := range cfg.Deny {
		if paths.Under(home, d) {
			return nil
		}
	}
	reqs := []moat.PathRequest{{Path: home, Access: moat.READ}}
	for _, g := range cfg.Grants {
		if g.Access.CanWrite() {
			reqs = append(reqs, moat.PathRequest{Path: g.Path, Access: g.Access})
		}
	}
	_, grants, err := moat.ResolvePaths("", reqs)
	if err != nil {
		return err
	}
	cfg.Grants = append(cfg.Grants, grants[0])
	return nil
}

// writableGuard collects what keeps paths in the writable places of a
// Config read-only: existing ones for ReadOnly, missing ones for Deny,
// and the directories of the links on the way for Seal.
type writableGuard struct {
	grants   []moat.Grant // the Config's grants
	denied   []string     // the Config's denied paths
	named    []string     // the paths a writable pattern names exactly
	readOnly []string
	deny     []string
	seal     []string // directories holding a guarded link
}

func newWritableGuard(cfg *moat.Config, named []string) *writableGuard {
	return &writableGuard{grants: cfg.Grants, denied: cfg.Deny, named: named}
}

// exposed reports whether the sandbox could write p or create it: the
// deepest grant that holds p (strictly) is writable, no deny below that
// grant covers p, and no writable pattern names p exactly (which makes
// it writable on purpose).
func (g *writableGuard) exposed(p string) bool {
	if slices.Contains(g.named, p) {
		return false
	}
	var best *moat.Grant
	for i, gr := range g.grants {
		if gr.Path == p {
			return false // granted as such: named, or read-only
		}
		if under(p, gr.Path) && (best == nil || len(gr.Path) > len(best.Path)) {
			best = &g.grants[i]
		}
	}
	if best == nil || !best.Access.CanWrite() {
		return false
	}
	for _, d := range g.denied {
		if (d == p || under(p, d)) && len(d) > len(best.Path) {
			return false // hidden: neither readable nor writable
		}
	}
	for _, r := range g.readOnly {
		if under(p, r) {
			return false // read-only whole already (a hidden entry of the home)
		}
	}
	return true
}

// writable reports whether the directory p itself is writable: the
// deepest grant at or above it allows writing, and no deny at or above p
// below that grant hides it.
func (g *writableGuard) writable(p string) bool {
	var best *moat.Grant
	for i, gr := range g.grants {
		if (gr.Path == p || under(p, gr.Path)) && (best == nil || len(gr.Path) > len(best.Path)) {
			best = &g.grants[i]
		}
	}
	if best == nil || !best.Access.CanWrite() {
		return false
	}
	for _, d := range g.denied {
		if (d == p || under(p, d)) && len(d) >= len(best.Path) && d != best.Path {
			return false
		}
	}
	return true
}

// under reports whether p lies strictly inside dir.
func under(p, dir string) bool { return p != dir && paths.Under(p, dir) }

// guard walks p from the root, following its links: the directory of
// each link on the way that a writable place holds is sealed (so that
// the link cannot be replaced), p itself becomes read-only when it
// exists, and when a component is missing the path is denied, so that it
// cannot be created. Outside the writable places nothing is added: they
// are read-only already.
func (g *writableGuard) guard(p string, links int) error {
	if links > maxHomeLinks {
		return errors.New("too many symbolic links")
	}
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/")
	cur := "/"
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if slices.Contains(g.seal, cur) {
				// Nothing can be created in a sealed directory: no
				// placeholder is needed.
				return nil
			}
			full := filepath.Join(append([]string{next}, parts[i+1:]...)...)
			if g.exposed(full) && !slices.Contains(g.deny, full) {
				g.deny = append(g.deny, full)
			}
			return nil
		case err != nil:
			if !g.exposed(next) {
				return nil // the sandbox cannot write there either
			}
			return unwrapPath(err)
		case fi.Mode()&fs.ModeSymlink != 0:
			if g.exposed(next) && !slices.Contains(g.seal, cur) {
				// No mount can cover a link: its directory is sealed
				// instead, so that no entry in it can be removed,
				// renamed or created (its other entries stay
				// writable).
				g.seal = append(g.seal, cur)
			}
			t, err := os.Readlink(next)
			if err != nil {
				return unwrapPath(err)
			}
			if !filepath.IsAbs(t) {
				t = filepath.Join(cur, t)
			}
			return g.guard(filepath.Join(append([]string{t}, parts[i+1:]...)...), links+1)
		}
		if i == len(parts)-1 && g.exposed(next) {
			// A read-only mount holds this name only: through another
			// hard link in a writable place the sandbox would change
			// the same file. Fail closed.
			if n, ok := fspattern.LinkCount(fi); ok && n > 1 && fi.Mode().IsRegular() {
				return fmt.Errorf("has %d hard links, and a writable pattern could change it through another of its names; make it a single file (or a symbolic link) to run with this pattern", n)
			}
			g.addReadOnly(next)
		}
		cur = next
	}
	return nil
}

func (g *writableGuard) addReadOnly(p string) {
	if !slices.Contains(g.readOnly, p) {
		g.readOnly = append(g.readOnly, p)
	}
}

// apply adds what g collected to cfg.
func (g *writableGuard) apply(cfg *moat.Config) {
	for _, p := range g.readOnly {
		if !slices.Contains(cfg.ReadOnly, p) {
			cfg.ReadOnly = append(cfg.ReadOnly, p)
		}
	}
	for _, p := range g.deny {
		if !slices.Contains(cfg.Deny, p) {
			cfg.Deny = append(cfg.Deny, p)
		}
	}
	for _, p := range g.seal {
		if !slices.Contains(cfg.Seal, p) {
			cfg.Seal = append(cfg.Seal, p)
		}
	}
}

// guardCwdControls denies each missing control name at the top of cwd
// that the filesystem patterns protect (a broad writable pattern covers
// the cwd: its control names are in ReadOnly; an absolute writable
// ancestor leaves them unprotected, as in Heimdall), so that the run
// cannot create it: on Linux a marked placeholder stands there for the
// run. Existing ones stay read-only, as the patterns made them. A cwd in
// sealed needs no placeholder.
func guardCwdControls(cfg *moat.Config, cwd string, named, sealed []string) {
	if slices.Contains(sealed, cwd) {
		return // the cwd is the sealed home: nothing can be created at its top
	}
	protected := slices.ContainsFunc(cfg.ReadOnly, func(r string) bool {
		return filepath.Dir(r) == cwd && slices.Contains(fspattern.ProtectedNames, filepath.Base(r))
	})
	if !protected {
		return
	}
	g := newWritableGuard(cfg, named)
	for _, name := range execCwdControlNames {
		p := filepath.Join(cwd, name)
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if g.exposed(p) && !slices.Contains(cfg.Deny, p) {
			cfg.Deny = append(cfg.Deny, p)
		}
	}
}

// namedWritable returns the paths that the literal writable patterns
// (no glob, no negation) name, made absolute as the patterns' ~ and
// relative paths are: a pattern that names a run-code entry or a control
// name exactly makes it writable, or creatable when it is missing.
func namedWritable(patterns []string, cwd, home string) []string {
	var out []string
	for _, w := range patterns {
		w = strings.TrimSuffix(strings.TrimSpace(w), "/")
		if w == "" || strings.HasPrefix(w, "!") || strings.HasPrefix(w, "#") || strings.ContainsAny(w, "*?[\\") {
			continue
		}
		p, err := placePath(w, cwd, home)
		if err != nil {
			continue
		}
		out = append(out, filepath.Clean(p))
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			out = append(out, r)
		}
	}
	return out
}

// canList reports whether the directory dir can be opened for listing.
func canList(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
