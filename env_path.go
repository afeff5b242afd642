package moat

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"

	"github.com/moat-sandbox/moat/internal/paths"
)

// sandboxPath is the PATH every command starts with.
func (s *Sandbox) sandboxPath() string {
	rules := hostview.PathRules{
		Exec:      s.backend.ExecRoots(),
		System:    hostview.SystemPathRoots,
		Denied:    hostview.NeverOnPath(),
		Protected: s.view.Protected,
	}
	rules.Writable = append([]string{s.dirs.Work}, s.dirs.PrivateRoots(s.caches.Stores())...)
	for _, g := range s.cfg.Grants {
		switch {
		case g.Access.CanWrite() && g.Access.CanExec():
			rules.WriteExec = append(rules.WriteExec, g.Path)
		case g.Access.CanWrite():
			rules.Writable = append(rules.Writable, g.Path)
		}
	}
	if p := hostview.FilterPath(os.Getenv("PATH"), rules, hostview.ResolveOS); p != "" {
		return p
	}
	return DefaultPath
}

// tempInside is what TMPDIR, TMP and TEMP say inside the sandbox: /tmp
// where the sandbox's /tmp is its private temp (a mount namespace, and no
// grant showing the host's /tmp there), else the private temp's host path.
func (s *Sandbox) tempInside() string {
	if s.dirs.Tmp() == "" {
		return ""
	}
	for _, g := range s.cfg.Grants {
		if paths.Under("/tmp", g.Path) {
			return s.dirs.Tmp()
		}
	}
	if s.backend != nil {
		for _, l := range s.backend.Report().Layers {
			if l.Name == "namespaces" && l.Active {
				return "/tmp"
			}
		}
	}
	return s.dirs.Tmp()
}

// envNow is the sandbox's environment for a command starting now: the base
// environment with TMPDIR, TMP and TEMP saying where the private temp is
// seen, which depends on whether the engine still uses a mount namespace.
// A value set through Config.Env is left as it is.
func (s *Sandbox) envNow() []string {
	host, inside := s.dirs.Tmp(), s.tempInside()
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
