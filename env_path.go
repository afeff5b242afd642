package moat

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"

	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/spec"
)

// sandboxPath is the PATH every command starts with: the host's PATH
// without what the sandbox cannot run (what backend b lets run, less the
// protected paths, less the writable places, the working directory and
// private roots first, and the writable grants).
func sandboxPath(b spec.Backend, protected, writable []string, grants []Grant) string {
	rules := hostview.PathRules{
		Exec:      b.ExecRoots(),
		System:    hostview.SystemPathRoots,
		Denied:    hostview.NeverOnPath(),
		Protected: protected,
	}
	rules.Writable = writable
	for _, g := range grants {
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
// where the sandbox's /tmp is its private temp tmp (a mount namespace in
// backend b, and no grant showing the host's /tmp there), else tmp, the
// private temp's host path.
func tempInside(tmp string, grants []Grant, b spec.Backend) string {
	if tmp == "" {
		return ""
	}
	for _, g := range grants {
		if paths.Under("/tmp", g.Path) {
			return tmp
		}
	}
	if b != nil {
		for _, l := range b.Report().Layers {
			if l.Name == "namespaces" && l.Active {
				return "/tmp"
			}
		}
	}
	return tmp
}

// envNow is base, the sandbox's environment, for a command starting now:
// with TMPDIR, TMP and TEMP saying inside where the private temp host is
// seen (tempInside), which depends on whether the engine still uses a
// mount namespace. A value set through Config.Env is left as it is.
func envNow(base []string, host, inside string) []string {
	if host == "" || host == inside {
		return base
	}
	env := append([]string(nil), base...)
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
func toolchainEnv(view spec.View, level Isolation) []string {
	home := view.Home
	if home == "" || level == IsolationStrict {
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
	if r, err := filepath.EvalSymlinks(dl); err == nil && hostview.Readable(view, r, specLevel(level)) {
		out = append(out, "GOPROXY=file://"+r+",https://proxy.golang.org,direct")
	}
	return out
}
