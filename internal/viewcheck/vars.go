package viewcheck

import (
	"path/filepath"
	"strings"
)

// Var is an environment variable that names a place a tool uses. The
// zero value names nothing.
type Var struct {
	Name string
	// List splits the value at the list separator (':').
	List bool
	// Need is what the tool needs of the place: GOCACHE is written,
	// GOROOT is run from, PYTHONPATH is read.
	Need Need
	// Program marks a variable naming one program (CC): checked only
	// when absolute, as a file to execute.
	Program bool
}

// Vars are the toolchain variables checked before a command starts. LD_*
// are missing on purpose: the sandbox never receives them.
var Vars = []Var{
	{Name: "PATH", List: true, Need: NeedExec},
	// Go
	{Name: "GOROOT", Need: NeedExec},
	{Name: "GOPATH", List: true, Need: NeedWrite},
	{Name: "GOMODCACHE", Need: NeedWrite},
	{Name: "GOCACHE", Need: NeedWrite},
	{Name: "GOTMPDIR", Need: NeedWrite | NeedExec},
	{Name: "GOBIN", Need: NeedWrite},
	// Python
	{Name: "PYTHONPATH", List: true},
	{Name: "PYTHONHOME", Need: NeedExec},
	{Name: "VIRTUAL_ENV", Need: NeedExec},
	{Name: "PYTHONPYCACHEPREFIX", Need: NeedWrite},
	{Name: "PIP_CACHE_DIR", Need: NeedWrite},
	// Node
	{Name: "NODE_PATH", List: true},
	{Name: "npm_config_cache", Need: NeedWrite},
	{Name: "NPM_CONFIG_CACHE", Need: NeedWrite},
	{Name: "npm_config_prefix", Need: NeedExec},
	{Name: "NPM_CONFIG_PREFIX", Need: NeedExec},
	// Rust
	{Name: "CARGO_HOME", Need: NeedWrite},
	{Name: "RUSTUP_HOME", Need: NeedExec},
	{Name: "CARGO_TARGET_DIR", Need: NeedWrite},
	// JVM, Ruby
	{Name: "JAVA_HOME", Need: NeedExec},
	{Name: "GEM_HOME"},
	{Name: "GEM_PATH", List: true},
	// XDG, C
	{Name: "XDG_CACHE_HOME", Need: NeedWrite},
	{Name: "XDG_CONFIG_HOME"},
	{Name: "XDG_DATA_HOME"},
	{Name: "PKG_CONFIG_PATH", List: true},
	{Name: "CPATH", List: true},
	{Name: "LIBRARY_PATH", List: true},
	{Name: "CC", Need: NeedExec, Program: true},
	{Name: "CXX", Need: NeedExec, Program: true},
}

// Finding is one place a variable or an argument names that the sandbox
// cannot use as needed. The zero value finds nothing.
type Finding struct {
	// Var is the variable's name; empty for a command-line argument.
	Var string
	// Path is the place named (for a missing one that must be created,
	// the existing directory above it).
	Path    string
	Problem Problem
	Need    Need
}

// CheckEnv checks the variables of Vars that names (nil: all) allows, as
// env (NAME=VALUE entries, the last one of a name winning) gives them,
// against v. Only absolute entries are checked: a relative one means the
// command's own directory, which it sees.
func (v *View) CheckEnv(env []string, names func(string) bool) []Finding {
	var out []Finding
	for _, d := range Vars {
		if names != nil && !names(d.Name) {
			continue
		}
		val, ok := lookup(env, d.Name)
		if !ok || val == "" {
			continue
		}
		vals := []string{val}
		if d.List {
			vals = filepath.SplitList(val)
		}
		seen := map[string]bool{}
		for _, p := range vals {
			if !filepath.IsAbs(p) || seen[p] {
				continue
			}
			seen[p] = true
			need := d.Need
			if d.Program {
				need = NeedExec
			}
			if pr, at := v.Check(p, need); pr != OK {
				out = append(out, Finding{Var: d.Name, Path: at, Problem: pr, Need: need})
			}
		}
	}
	return out
}

// CheckArgs checks each absolute argument of args (the program as args[0]
// included) for a path that the sandbox cannot see: one under a protected
// path, whether or not it exists (its finding must not tell which secrets
// the host holds), or one that exists on the host and is hidden. An
// argument that is not a path, is relative, or does not exist otherwise
// gives nothing.
func (v *View) CheckArgs(args []string) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for i, a := range args {
		if !strings.HasPrefix(a, "/") || seen[a] || strings.ContainsRune(a, 0) {
			continue
		}
		seen[a] = true
		need := NeedRead
		if i == 0 {
			need = NeedExec
		}
		// A path under a protected one is told whether or not it exists,
		// so that the line is no oracle of which secrets the host holds.
		if c := filepath.Clean(a); v.protected(c) {
			out = append(out, Finding{Path: c, Problem: Protected, Need: need})
			continue
		}
		pr, at := v.Check(a, need)
		if pr == Protected || pr == Hidden || pr == PrivateTemp {
			out = append(out, Finding{Path: at, Problem: pr, Need: need})
		}
	}
	return out
}

// lookup is env's last value of name.
func lookup(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, val, ok := strings.Cut(env[i], "="); ok && k == name {
			return val, true
		}
	}
	return "", false
}

// NeedOf is what the tool behind the variable name needs of the place it
// names, and whether Vars lists it.
func NeedOf(name string) (Need, bool) {
	for _, d := range Vars {
		if d.Name == name {
			return d.Need, true
		}
	}
	return NeedRead, false
}
