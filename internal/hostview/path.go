package hostview

import (
	"os"
	"path/filepath"
	"strings"

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

// PathRules say which PATH entries stay. The zero value keeps none.
type PathRules struct {
	Exec      []string // where the sandbox may execute (resolved)
	Writable  []string // where it writes (resolved)
	WriteExec []string // rwx grants, which may stay although writable
	Denied    []string // never: temp, /proc, /sys, /dev, /run
	// protected never stay either; View resolved them already
	// (each protected path and what it leads to), so they are not again.
	Protected []string
	// system are the roots bound whole inside the sandbox, so every link
	// inside them exists there too: an entry spelled under one keeps its
	// spelling; another entry that goes through a link is replaced by what
	// it resolves to, since the link itself may not exist inside.
	System []string
}

// ResolveFunc resolves a path's links and reports whether it is a
// directory.
type ResolveFunc func(string) (resolved string, isDir bool, err error)

// ResolveOS is ResolveFunc on the host's file system.
func ResolveOS(p string) (string, bool, error) {
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

// FilterPath returns the entries of hostPath that rules keep, in order,
// each once; "" when none is kept.
func FilterPath(hostPath string, rules PathRules, resolve ResolveFunc) string {
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
	exec, writable, rwx := res(rules.Exec), res(rules.Writable), res(rules.WriteExec)
	denied := append(res(rules.Denied), rules.Protected...)
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
		if r != e && !paths.UnderAny(e, rules.System) {
			out = r
		}
		if !seen[out] {
			seen[out] = true
			kept = append(kept, out)
		}
	}
	return strings.Join(kept, string(filepath.ListSeparator))
}

// SystemPathRoots are the system directories a backend binds whole into
// the sandbox, so that every link inside them exists there too.
var SystemPathRoots = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// NeverOnPath are the directories that never stay on PATH: nothing runs
// from temp, and nothing from the kernel's file systems.
func NeverOnPath() []string {
	return []string{"/tmp", "/var/tmp", "/dev/shm", "/proc", "/sys", "/dev", "/run"}
}
