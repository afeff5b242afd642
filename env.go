package moat

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/spec"
)

// DefaultPath is the PATH of a sandboxed command unless PATH is passed
// through or set.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

// defaultPassthrough are host variables that carry no secrets and that
// terminals and locales need.
var defaultPassthrough = []string{"TERM", "LANG", "LANGUAGE", "TZ", "COLORTERM", "NO_COLOR"}

// baseEnv builds the environment every command of the sandbox starts from,
// with proxy, the variables that send clients to its proxy (proxy.go).
func (s *Sandbox) baseEnv(proxy []string) []string {
	// HOME and TMPDIR are the sandbox's own (workdir.go), never the
	// working directory: Go ignores a go.mod at the temp root, and tools
	// would fill a supplied project with caches. TMPDIR is the host path
	// here; envNow says /tmp where that is the private temp.
	home, tmp := s.dirs.PrivateHome(), s.dirs.Tmp()
	if home == "" || tmp == "" { // no state directory: never in practice
		home, tmp = s.dirs.Work, s.dirs.Work
	}
	name := hostview.UserName()
	env := []string{
		"PATH=" + sandboxPath(s.backend, s.view.Protected, append([]string{s.dirs.Work}, s.dirs.PrivateRoots(s.caches.Stores())...), s.cfg.Grants),
		"HOME=" + home,
		"TMPDIR=" + tmp, "TMP=" + tmp, "TEMP=" + tmp,
		"USER=" + name, "LOGNAME=" + name,
		"SHELL=/bin/sh",
	}
	for _, kv := range hostview.Env(s.view, specLevel(s.cfg.Isolation)) {
		env = mergeEnv(env, kv)
	}
	for _, kv := range toolchainEnv(s.view, s.cfg.Isolation) {
		env = mergeEnv(env, kv)
	}
	for _, kv := range hostview.QuietEnv { // internal/hostview
		env = mergeEnv(env, kv)
	}
	for _, kv := range proxy {
		env = mergeEnv(env, kv)
	}
	for _, kv := range s.build.Env() {
		env = mergeEnv(env, kv)
	}
	pass := append(append([]string(nil), defaultPassthrough...), s.cfg.Env.Passthrough...)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LC_") || slices.Contains(pass, k) {
			env = mergeEnv(env, kv)
		}
	}
	for _, kv := range s.cfg.Env.Set {
		env = mergeEnv(env, kv)
	}
	for _, kv := range s.ipc.Env(lookupEnv(env, "PATH")) { // internal/ipchost: the shims first on PATH
		env = mergeEnv(env, kv)
	}
	return env
}

// commandEnv applies a command's own entries over base and strips what must
// never reach a sandbox.
// cmdEnv is the environment of a command whose Cmd.Env is extra: the
// sandbox's, with extra over it, and the IPC shims first on PATH even
// when extra sets PATH (internal/ipchost).
func (s *Sandbox) cmdEnv(extra []string) []string {
	env := commandEnv(envNow(s.env, s.dirs.Tmp(), tempInside(s.dirs.Tmp(), s.cfg.Grants, s.backend)), extra)
	for _, kv := range s.ipc.Env(lookupEnv(env, "PATH")) {
		env = mergeEnv(env, kv)
	}
	return env
}

func commandEnv(base, extra []string) []string {
	env := append([]string(nil), base...)
	for _, kv := range extra {
		env = mergeEnv(env, kv)
	}
	out := env[:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !forbiddenEnv(k) {
			out = append(out, kv)
		}
	}
	return out
}

// forbiddenEnv reports variables that are stripped even when set
// explicitly: dynamic-loader controls and moat's own helper marker.
func forbiddenEnv(k string) bool {
	return strings.HasPrefix(k, "LD_") || strings.HasPrefix(k, "DYLD_") || k == "_MOAT_HELPER_ROLE" || k == ""
}

// mergeEnv sets kv in env, replacing an entry with the same name.
func mergeEnv(env []string, kv string) []string {
	k, _, _ := strings.Cut(kv, "=")
	for i, e := range env {
		if ek, _, _ := strings.Cut(e, "="); ek == k {
			env[i] = kv
			return env
		}
	}
	return append(env, kv)
}

func lookupEnv(env []string, k string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if ek, v, _ := strings.Cut(env[i], "="); ek == k {
			return v
		}
	}
	return ""
}

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
