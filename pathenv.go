package moat

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"

	"github.com/moat-sandbox/moat/internal/paths"
)

// PATH inside the sandbox is the host's, filtered: an entry is kept, in
// its place, when it is an absolute path to a directory, resolved through
// its links, under which the sandbox may execute (a system path, a curated
// toolchain directory of the home, an x grant), and that the sandbox cannot
// write, unless an rwx grant holds it: a directory on PATH that the sandbox
// writes would let it plant a program that a later command of its own runs
// by name. Protected paths, the temporary directories and the kernel's file
// systems never stay. Where nothing is left, PATH is DefaultPath.

// pathRules say which PATH entries stay.
type pathRules struct {
	exec      []string // where the sandbox may execute (resolved)
	writable  []string // where it writes (resolved)
	writeExec []string // rwx grants, which may stay although writable
	denied    []string // never: temp, /proc, /sys, /dev, /run
	// protected never stay either; computeExposure resolved them already
	// (each protected path and what it leads to), so they are not again.
	protected []string
	// system are the roots bound whole inside the sandbox, so every link
	// inside them exists there too: an entry spelled under one keeps its
	// spelling; another entry that goes through a link is replaced by what
	// it resolves to, since the link itself may not exist inside.
	system []string
}

// resolveFunc resolves a path's links and reports whether it is a
// directory.
type resolveFunc func(string) (resolved string, isDir bool, err error)

func resolveOS(p string) (string, bool, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false, err
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", false, err
	}
	return r, fi.IsDir(), nil
}

// filterPath returns the entries of hostPath that rules keep, in order,
// each once; "" when none is kept.
func filterPath(hostPath string, rules pathRules, resolve resolveFunc) string {
	res := func(list []string) []string {
		out := make([]string, 0, len(list))
		for _, p := range list {
			if r, _, err := resolve(p); err == nil {
				out = append(out, r)
			} else if filepath.IsAbs(p) {
				out = append(out, filepath.Clean(p))
			}
		}
		return out
	}
	exec, writable, rwx := res(rules.exec), res(rules.writable), res(rules.writeExec)
	denied := append(res(rules.denied), rules.protected...)
	var kept []string
	seen := map[string]bool{}
	for _, e := range filepath.SplitList(hostPath) {
		if !filepath.IsAbs(e) {
			continue // "" and "." mean the current directory: never
		}
		e = filepath.Clean(e)
		r, dir, err := resolve(e)
		if err != nil || !dir || !paths.UnderAny(r, exec) || paths.UnderAny(r, denied) || (paths.UnderAny(r, writable) && !paths.UnderAny(r, rwx)) {
			continue
		}
		out := e
		if r != e && !paths.UnderAny(e, rules.system) {
			out = r
		}
		if !seen[out] {
			seen[out] = true
			kept = append(kept, out)
		}
	}
	return strings.Join(kept, string(filepath.ListSeparator))
}

// tempDirs and kernelDirs never stay on PATH: nothing runs from temp, and
// nothing from the kernel's file systems.
var tempDirs = []string{"/tmp", "/var/tmp", "/dev/shm"}
var kernelDirs = []string{"/proc", "/sys", "/dev", "/run"}

// systemPathRoots are bound whole into the sandbox.
var systemPathRoots = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// sandboxPath is the PATH every command starts with.
func (s *Sandbox) sandboxPath() string {
	rules := pathRules{
		exec:      s.backend.ExecRoots(),
		system:    systemPathRoots,
		denied:    append(append([]string(nil), tempDirs...), kernelDirs...),
		protected: s.view.Protected,
	}
	rules.writable = append([]string{s.workDir}, s.privateRoots()...)
	for _, g := range s.cfg.Grants {
		switch {
		case g.Access.CanWrite() && g.Access.CanExec():
			rules.writeExec = append(rules.writeExec, g.Path)
		case g.Access.CanWrite():
			rules.writable = append(rules.writable, g.Path)
		}
	}
	if p := filterPath(os.Getenv("PATH"), rules, resolveOS); p != "" {
		return p
	}
	return DefaultPath
}

// tempInside is what TMPDIR, TMP and TEMP say inside the sandbox: /tmp
// where the sandbox's /tmp is its private temp (a mount namespace, and no
// grant showing the host's /tmp there), else the private temp's host path.
func (s *Sandbox) tempInside() string {
	if s.privateTmp() == "" {
		return ""
	}
	for _, g := range s.cfg.Grants {
		if paths.Under("/tmp", g.Path) {
			return s.privateTmp()
		}
	}
	if s.backend != nil {
		for _, l := range s.backend.Report().Layers {
			if l.Name == "namespaces" && l.Active {
				return "/tmp"
			}
		}
	}
	return s.privateTmp()
}

// envNow is the sandbox's environment for a command starting now: the base
// environment with TMPDIR, TMP and TEMP saying where the private temp is
// seen, which depends on whether the engine still uses a mount namespace.
// A value set through Config.Env is left as it is.
func (s *Sandbox) envNow() []string {
	host, inside := s.privateTmp(), s.tempInside()
	if host == "" || host == inside {
		return s.env
	}
	env := append([]string(nil), s.env...)
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if (k == "TMPDIR" || k == "TMP" || k == "TEMP") && v == host {
			env[i] = k + "=" + inside
		}
	}
	return env
}

// toolchainEnv points toolchains at what they need while HOME is the
// private home. Go's module cache is the private home's (go writes it),
// but the user's own cache, when the sandbox may read it, is its first
// module proxy, so builds that need only modules the user already has
// work offline; a module missing there falls through to the usual proxy.
func (s *Sandbox) toolchainEnv() []string {
	home := s.view.Home
	if home == "" || s.cfg.Isolation == IsolationStrict {
		return nil
	}
	var out []string
	mod := filepath.Join(home, "go", "pkg", "mod")
	if v := os.Getenv("GOMODCACHE"); filepath.IsAbs(v) {
		mod = v
	} else if v := filepath.SplitList(os.Getenv("GOPATH")); len(v) > 0 && filepath.IsAbs(v[0]) {
		mod = filepath.Join(v[0], "pkg", "mod")
	}
	dl := filepath.Join(mod, "cache", "download")
	if r, err := filepath.EvalSymlinks(dl); err == nil && hostview.Readable(s.view, r, specLevel(s.cfg.Isolation)) {
		out = append(out, "GOPROXY=file://"+r+",https://proxy.golang.org,direct")
	}
	return out
}
