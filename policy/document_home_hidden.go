package policy

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/paths"
)

// The hidden entries of moat exec's home. A writable pattern that covers
// the home's top (writable: ["~"], or ".", "**" with the home as the cwd)
// leaves every hidden entry at that top (~/.NAME) read-only: its text
// names no hidden place. Only a pattern whose own text names a hidden
// component at the home's top opens the entries that component matches:
// "~/.cache", "~/.config/**", "~/.local/share/foo", "~/.*", and a
// relative ".cache" or "**/.cache" when the cwd is the home. A pattern
// that reaches hidden places only through a wildcard ("~/*", "**/*.json")
// opens nothing. The hidden entry that holds the cwd is open too: the
// user chose to work there. Inside an open entry, the run-code entries
// (internal/homecontrol) stay protected unless named exactly.

// hiddenOpen lists the components (as written, glob syntax allowed) that
// open hidden entries at the home's top. The zero value opens none.
type hiddenOpen []string

// match reports whether the hidden name (one component) is opened.
func (o hiddenOpen) match(name string) bool {
	for _, c := range o {
		if c == name {
			return true
		}
		if ok, err := path.Match(c, name); err == nil && ok {
			return true
		}
	}
	return false
}

// hiddenOpeners returns the components of patterns (writable patterns
// and the document's grant paths) that open hidden entries at the top of
// home (as written, and real, its resolved spelling), and the hidden
// entry that holds cwd. A negated pattern or a comment opens nothing.
func hiddenOpeners(patterns []string, cwd, home, real string) hiddenOpen {
	var out hiddenOpen
	bases := []string{home}
	if real != home {
		bases = append(bases, real)
	}
	rel := func(p string) (string, bool) {
		for _, b := range bases {
			if p == b {
				return "", true
			}
			if paths.Under(p, b) {
				return p[len(b)+1:], true
			}
		}
		return "", false
	}
	cwdRel, cwdIn := rel(filepath.Clean(cwd))
	if first, _, _ := strings.Cut(cwdRel, "/"); cwdIn && strings.HasPrefix(first, ".") {
		out = append(out, first)
	}
	for _, w := range patterns {
		w = strings.TrimSpace(w)
		if w == "" || strings.HasPrefix(w, "!") || strings.HasPrefix(w, "#") {
			continue
		}
		w = strings.TrimRight(w, "/")
		var r string
		switch {
		case w == "~" || w == "":
			continue
		case strings.HasPrefix(w, "~/"):
			r = w[2:]
		case filepath.IsAbs(w):
			var ok bool
			if r, ok = rel(w); !ok {
				continue
			}
		default:
			if !cwdIn {
				continue
			}
			anchored := strings.HasPrefix(w, "./") || strings.Contains(w, "/")
			w = strings.TrimPrefix(w, "./")
			if !anchored {
				w = "**/" + w
			}
			r = strings.TrimPrefix(cwdRel+"/"+w, "/")
		}
		if c := topComponent(r); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// topComponent returns the first component of the home-relative pattern
// r, past any "**", when it names a hidden entry (its text starts with a
// dot, escaped or in a class of its own), or "".
func topComponent(r string) string {
	for _, c := range strings.Split(r, "/") {
		if c == "**" || c == "" {
			continue
		}
		if c == "." || c == ".." {
			return "" // the cwd itself ("."), or refused by the compiler
		}
		if strings.HasPrefix(c, ".") || strings.HasPrefix(c, `\.`) || strings.HasPrefix(c, "[.]") {
			return c
		}
		return ""
	}
	return ""
}

// keepHiddenGrantsReadOnly takes writing away from each grant strictly
// inside a hidden entry at the top of real (the home, resolved) that
// opens does not open: a pattern that does not name the hidden place
// ("**/*.json" with the home as the cwd) does not make it writable.
func keepHiddenGrantsReadOnly(cfg *moat.Config, real string, opens hiddenOpen) {
	if real == "/" {
		return
	}
	for i, g := range cfg.Grants {
		if !g.Access.CanWrite() || !under(g.Path, real) {
			continue
		}
		first, _, _ := strings.Cut(g.Path[len(real)+1:], "/")
		if strings.HasPrefix(first, ".") && !opens.match(first) {
			cfg.Grants[i].Access &^= moat.WRITE
		}
	}
}

// grantPaths returns the paths of the document's grants.
func grantPaths(reqs []moat.PathRequest) []string {
	out := make([]string, 0, len(reqs))
	for _, r := range reqs {
		out = append(out, r.Path)
	}
	return out
}

// keepControlGrantsReadOnly takes writing away from each grant at or
// inside a run-code entry of the home (entries) that no pattern names
// exactly: a glob that matches one (".*" with the home as the cwd)
// grants it by its path, but does not name it.
func keepControlGrantsReadOnly(cfg *moat.Config, entries, named []string) {
	for i, g := range cfg.Grants {
		if !g.Access.CanWrite() || slices.Contains(named, g.Path) {
			continue
		}
		for _, e := range entries {
			if (g.Path == e || under(g.Path, e)) && !slices.Contains(named, e) {
				cfg.Grants[i].Access &^= moat.WRITE
				break
			}
		}
	}
}
