// Package viewcheck answers, on the host and before a command starts,
// whether a path the command is told about (by an environment variable or
// on its command line) is one the sandbox can see, write or execute, and if
// not, why. It models the view a backend enforces from the same inputs
// (allow-list roots, protected paths, shared temp); it enforces nothing,
// and its answers only feed refusals that tell the user which flag would
// help. It never opens a file: it resolves links and stats, as the user
// running moat could.
package viewcheck

import (
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/paths"
)

// Need is what a command needs of a path. The zero value needs it to be
// visible (readable) only.
type Need uint8

const (
	// NeedRead needs the path readable.
	NeedRead Need = 0
	// NeedWrite needs the path writable (or creatable, when missing).
	NeedWrite Need = 1 << iota
	// NeedExec needs what is under the path executable.
	NeedExec
)

// Problem is why a path falls short of a Need. The zero value is OK.
type Problem uint8

const (
	// OK: the sandbox can use the path as needed, or the path does not
	// exist on the host (nothing is hidden then).
	OK Problem = iota
	// Protected: a protected path (a secret), hidden at every level.
	Protected
	// Hidden: outside everything the sandbox is shown.
	Hidden
	// PrivateTemp: in the host's shared temp, which the sandbox sees as
	// its own empty temp.
	PrivateTemp
	// ReadOnly: visible, but the sandbox cannot write it.
	ReadOnly
	// NoExec: visible, but nothing under it may be executed.
	NoExec
)

// String says the problem in words, for a refusal's detail.
func (p Problem) String() string {
	switch p {
	case Protected:
		return "protected secret, hidden from the sandbox"
	case Hidden:
		return "not visible in the sandbox"
	case PrivateTemp:
		return "in the host's shared temp, which the sandbox does not see (its temp is its own)"
	case ReadOnly:
		return "read-only in the sandbox"
	case NoExec:
		return "not executable in the sandbox"
	}
	return "ok"
}

// View is the sandbox's view of the host, as allow-list roots (each with
// everything beneath it) and what is carved out of them. Paths are
// absolute and clean; roots are matched both as given and resolved
// through their links. The zero value shows nothing.
type View struct {
	// Read, Exec, Write are the roots readable; readable and executable;
	// readable and writable. A root in Write and Exec is both.
	Read, Exec, Write []string
	// Everything makes every path readable, writable and executable but
	// what Protected, Hidden, Temp and ReadOnly take away (the permissive
	// level).
	Everything bool
	// Protected are protected paths: unreadable whatever a root says,
	// except beneath a grant that lies inside one (Granted).
	Protected []string
	// Granted are the granted paths: a grant of a path inside a protected
	// one opens it (and only it).
	Granted []string
	// Hidden are other paths taken out of the roots (a home hidden as a
	// whole, denied paths); Shown are paths under them shown again.
	Hidden, Shown []string
	// ReadOnly are paths whose writes are refused whatever a root says.
	ReadOnly []string
	// Temp are the shared temporary directories: their host entries are
	// hidden but for roots under them; the directory itself is writable
	// when TempPrivate (the sandbox's own temp is mounted there).
	Temp        []string
	TempPrivate bool

	protectedSet map[string]bool // Protected, as a set (Resolve)
}

// Check reports why the sandbox cannot use p as need says, or OK; p must
// be absolute. A path missing on the host is OK unless need has
// NeedWrite, when the nearest existing directory above it must be
// writable for the command to create it. The second result is the path
// the answer is about (p, or the existing directory above it).
func (v *View) Check(p string, need Need) (Problem, string) {
	p = filepath.Clean(p)
	if !filepath.IsAbs(p) {
		return OK, p
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if need&NeedWrite == 0 {
			return OK, p
		}
		// Missing: can the command create it?
		dir := filepath.Dir(p)
		for dir != filepath.Dir(dir) {
			if r, err := filepath.EvalSymlinks(dir); err == nil {
				if fi, err := os.Stat(r); err == nil && fi.IsDir() {
					if !hostWritable(r) {
						return OK, p // the host user cannot create it either
					}
					pr := v.access(dir, r, NeedWrite, true)
					if pr == ReadOnly && v.shown(r) == OK {
						return ReadOnly, dir
					}
					return pr, dir
				}
				return OK, p
			}
			dir = filepath.Dir(dir)
		}
		return OK, p
	}
	if need&NeedWrite != 0 && !hostWritable(real) {
		need &^= NeedWrite // the host user cannot write it either
	}
	return v.access(p, real, need, false), p
}

// access judges the existing path p, which resolves to real.
func (v *View) access(p, real string, need Need, creating bool) Problem {
	if v.protected(p) || v.protected(real) {
		return Protected
	}
	if pr := v.shown(real); pr != OK {
		return pr
	}
	if creating && v.TempPrivate && contains(v.Temp, real) {
		return OK // the sandbox's own temp is there
	}
	if need&NeedWrite != 0 && (under(real, v.ReadOnly) || !(v.everything(real) || under(real, v.Write))) {
		return ReadOnly
	}
	if need&NeedExec != 0 && !(v.everything(real) || under(real, v.Exec)) {
		return NoExec
	}
	return OK
}

// protected reports whether a protected path covers p that no grant
// inside it, over p, opens again.
func (v *View) protected(p string) bool {
	for q := p; ; q = filepath.Dir(q) {
		if v.protectedSet != nil && v.protectedSet[q] || v.protectedSet == nil && contains(v.Protected, q) {
			if !v.opened(p, q) {
				return true
			}
		}
		if q == "/" || q == "." {
			return false
		}
	}
}

// opened reports whether a grant beneath the protected path q, over p,
// opens p again.
func (v *View) opened(p, q string) bool {
	for _, g := range v.Granted {
		if paths.Under(p, g) && paths.Under(g, q) && g != q {
			return true
		}
	}
	return false
}

// shown reports whether real is visible at all.
func (v *View) shown(real string) Problem {
	roots := [][]string{v.Read, v.Exec, v.Write}
	inRoot := false
	for _, r := range roots {
		inRoot = inRoot || under(real, r)
	}
	if under(real, v.Hidden) && !under(real, v.Shown) && !inRoot {
		return Hidden
	}
	if strictlyUnder(real, v.Temp) && !inRoot {
		if v.Everything && !v.TempPrivate {
			return OK // the host's temp itself, read-only (the permissive level without a mount namespace)
		}
		return PrivateTemp
	}
	if contains(v.Temp, real) && (v.TempPrivate || inRoot) {
		return OK
	}
	if v.Everything || inRoot {
		return OK
	}
	return Hidden
}

// everything reports whether the permissive rule covers real: not in
// temp, which it leaves read-only.
func (v *View) everything(real string) bool {
	return v.Everything && !under(real, v.Temp)
}

// under reports whether p is one of roots or beneath one.
func under(p string, roots []string) bool {
	for _, r := range roots {
		if paths.Under(p, r) {
			return true
		}
	}
	return false
}

// strictlyUnder reports whether p lies beneath, not at, one of roots.
func strictlyUnder(p string, roots []string) bool {
	for _, r := range roots {
		if p != r && paths.Under(p, r) {
			return true
		}
	}
	return false
}

func contains(list []string, p string) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}

// Resolve returns v with every allow-list root also spelled as it
// resolves through its links (/bin as /usr/bin), since Check judges
// resolved paths: call it once, when the view is built, not per check.
// Protected paths need nothing: the home view lists a protected link and
// what it leads to already.
func (v View) Resolve() View {
	res := func(list []string) []string {
		out := append([]string(nil), list...)
		for _, r := range list {
			if rr, err := filepath.EvalSymlinks(r); err == nil && rr != r {
				out = append(out, rr)
			}
		}
		return out
	}
	v.Read, v.Exec, v.Write = res(v.Read), res(v.Exec), res(v.Write)
	v.Shown, v.ReadOnly = res(v.Shown), res(v.ReadOnly)
	v.protectedSet = make(map[string]bool, len(v.Protected))
	for _, p := range v.Protected {
		v.protectedSet[p] = true
	}
	return v
}
