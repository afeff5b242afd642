package moat

import (
	"os"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
)

// DefaultPath is the PATH of a sandboxed command unless PATH is passed
// through or set.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

// defaultPassthrough are host variables that carry no secrets and that
// terminals and locales need.
var defaultPassthrough = []string{"TERM", "LANG", "LANGUAGE", "TZ", "COLORTERM", "NO_COLOR"}

// baseEnv builds the environment every command of the sandbox starts from.
func (s *Sandbox) baseEnv() []string {
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
		"PATH=" + sandboxPath(s.backend, s.view.Protected, append([]string{s.dirs.Work}, s.dirs.PrivateRoots(s.caches.Stores())...), s.cfg.Grants), // env_path.go
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
	for _, kv := range s.proxy.env() {
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
	env := commandEnv(envNow(s.env, s.dirs.Tmp(), tempInside(s.dirs.Tmp(), s.cfg.Grants, s.backend)), extra) // env_path.go
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
