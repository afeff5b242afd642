package policy

import (
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/paths"
)

// A grant of a protected path itself lifts its protection (a grant of its
// parent does not): that is how a user opens ~/.ssh on purpose. A pattern
// is not a purpose: "~/.*", ".s*" or "**/id_rsa" would match ~/.ssh or a
// key and so open it. withoutProtected keeps, of the paths the patterns
// made readable or writable, only those that lie outside every path any
// protection could cover, or that a pattern names literally (no *, ?
// or [, anchored: the very path, not a name matched at any depth).
// Every protection counts, whichever switches the document sets: a switch
// turned off still needs the path named to open it.

// protectedPaths are the paths any protection covers, in home and in
// every home moat protects.
func protectedPaths(home string) []string {
	all := moat.IsolationStrict.Security()
	out := all.ProtectedPathsOfAllHomes()
	if home != "" {
		out = append(out, all.ProtectedPaths(home)...)
	}
	return out
}

// literalTargets are the absolute paths the patterns name literally.
func literalTargets(cwd, home string, patterns []string) map[string]bool {
	out := map[string]bool{}
	for _, p := range patterns {
		if p == "" || strings.HasPrefix(p, "!") || strings.HasPrefix(p, "#") || strings.ContainsAny(p, "*?[\\") {
			continue
		}
		p = strings.TrimSuffix(p, "/")
		switch {
		case p == "~":
			p = home
		case strings.HasPrefix(p, "~/"):
			if home == "" {
				continue
			}
			p = filepath.Join(home, p[2:])
		case filepath.IsAbs(p):
		default:
			// Relative: anchored at the cwd (a name without a slash
			// matches at any depth, but its literal reading is the
			// cwd's own entry).
			p = filepath.Join(cwd, strings.TrimPrefix(p, "./"))
		}
		p = filepath.Clean(p)
		out[p] = true
		if real, err := filepath.EvalSymlinks(p); err == nil {
			out[real] = true
		}
	}
	return out
}

// withoutProtected drops from ps the paths inside a protected one that no
// pattern names literally.
func withoutProtected(ps []string, protected []string, literal map[string]bool) []string {
	var out []string
	for _, p := range ps {
		if literal[p] || !paths.UnderAny(p, protected) {
			out = append(out, p)
		}
	}
	return out
}
