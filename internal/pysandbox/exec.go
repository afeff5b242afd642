package pysandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MPLBackend is what model-written plotting code gets unless the caller
// chooses: matplotlib's file-only backend, since a sandbox has no display.
const MPLBackend = "MPLBACKEND=Agg"

// SetsEnv reports whether a configuration that passes through passthrough
// and sets set (NAME=VALUE entries) sets or passes the variable name.
func SetsEnv(passthrough, set []string, name string) bool {
	for _, k := range passthrough {
		if k == name {
			return true
		}
	}
	for _, kv := range set {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			return true
		}
	}
	return false
}

// Exec is the interpreter a sandbox runs and the environment entries it
// adds: MPLBACKEND=Agg unless mplSet; without a venv (venvDir empty)
// python3 from the sandbox's PATH; with one, its bin/python, VIRTUAL_ENV
// and its bin/ first on PATH, after the IPC shims (shimDir, when not
// empty), then the rest of path, the sandbox's PATH.
func Exec(venvDir, shimDir, path string, mplSet bool) (string, []string) {
	env := []string{}
	if !mplSet {
		env = append(env, MPLBackend)
	}
	if venvDir == "" {
		return "python3", env
	}
	bin := filepath.Join(venvDir, "bin")
	dirs := []string{bin}
	if shimDir != "" {
		// The IPC shims stay first: with AllowPipInstall bin/ is
		// writable, and a program put there must not shadow one.
		dirs = []string{shimDir, bin}
	}
	for _, d := range filepath.SplitList(path) {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	path = strings.Join(dirs, string(os.PathListSeparator))
	return filepath.Join(bin, "python"), append(env, "VIRTUAL_ENV="+venvDir, "PATH="+path)
}
