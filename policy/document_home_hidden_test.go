package policy

import (
	"slices"
	"strings"
	"testing"
)

// TestHiddenOpeners: which hidden entries at the home's top a pattern
// opens; a pattern that names no hidden place opens none.
func TestHiddenOpeners(t *testing.T) {
	const home, real = "/home/u", "/data/u"
	tests := []struct {
		patterns []string
		cwd      string
		open     []string // names that must be opened
		closed   []string // names that must stay closed
	}{
		{[]string{"~"}, "/home/u/proj", nil, []string{".config", ".bashrc", ".cache"}},
		{[]string{"~/**", "**", ".", "*", "~/*", "**/*.json"}, "/home/u", nil, []string{".config", ".bashrc"}},
		{[]string{"~/.cache"}, "/home/u/proj", []string{".cache"}, []string{".config"}},
		{[]string{"~/.config/**"}, "/home/u/proj", []string{".config"}, []string{".local"}},
		{[]string{"~/.local/share/foo/"}, "/home/u/proj", []string{".local"}, []string{".config"}},
		{[]string{"~/.*"}, "/home/u/proj", []string{".config", ".bashrc"}, []string{"notes"}},
		{[]string{".cache"}, "/home/u", []string{".cache"}, []string{".config"}},
		{[]string{"**/.cache"}, "/home/u", []string{".cache"}, []string{".config"}},
		{[]string{".cache"}, "/home/u/proj", nil, []string{".cache"}},
		{[]string{"/data/u/.gitconfig", "/home/u/.npmrc"}, "/srv", []string{".gitconfig", ".npmrc"}, []string{".config"}},
		{[]string{"!~/.config", "# ~/.config", ""}, "/home/u/proj", nil, []string{".config"}},
		{[]string{"."}, "/home/u/.local/src/p", []string{".local"}, []string{".config"}},
		{[]string{"**/foo/.cache"}, "/home/u", nil, []string{".local", ".cache"}},
		{[]string{".", "./"}, "/home/u", nil, []string{".", ".config"}},
	}
	for _, tt := range tests {
		o := hiddenOpeners(tt.patterns, tt.cwd, home, real)
		for _, n := range tt.open {
			if !o.match(n) {
				t.Errorf("%q (cwd %s): %s closed; want it open", tt.patterns, tt.cwd, n)
			}
		}
		for _, n := range tt.closed {
			if o.match(n) {
				t.Errorf("%q (cwd %s): %s open; want it closed", tt.patterns, tt.cwd, n)
			}
		}
	}
}

// FuzzHiddenOpeners: hiddenOpeners never panics, and each component it
// returns is one hidden component (no "/", a leading dot).
func FuzzHiddenOpeners(f *testing.F) {
	for _, s := range []string{"~", "~/.cache", "~/.config/**", "**/.x", ".*", "/home/u/.a", "!~/.b", `~/\.c`, "~/[.]d", "a/../.e", "/", "~/"} {
		f.Add(s, "/home/u")
	}
	f.Fuzz(func(t *testing.T, p, cwd string) {
		for _, c := range hiddenOpeners([]string{p}, cwd, "/home/u", "/data/u") {
			if strings.Contains(c, "/") || c == "" || !slices.ContainsFunc([]string{".", `\.`, "[.]"}, func(pre string) bool { return strings.HasPrefix(c, pre) }) {
				t.Fatalf("hiddenOpeners(%q, cwd %q) gave %q", p, cwd, c)
			}
		}
	})
}
