package moat

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shellHistoryAdded are the histories protected since the split that the
// list before it lacked.
var shellHistoryAdded = []string{
	".julia/logs/repl_history.jl", ".local/share/atuin", ".mongodb/mongosh",
	".config/nushell/history.txt", ".config/nushell/history.sqlite3",
	".Rhistory", ".local/state/lesshst",
}

// beforeSplit reads what ProtectedPaths of every preset returned before
// ProtectShellHistory and ProtectPackageCredentials were split out of
// ProtectCredentials.
func beforeSplit(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "protected-paths-before-split.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	if len(out) < 150 {
		t.Fatalf("the list before the split has only %d paths", len(out))
	}
	return out
}

// Every preset protects exactly what it protected before the split, plus
// the histories added with it.
func TestProtectionSplitKeepsPresets(t *testing.T) {
	home := filepath.Join(t.TempDir(), "no-such-home") // nothing for the scan to find
	want := append(beforeSplit(t), shellHistoryAdded...)
	slices.Sort(want)
	for _, level := range []Isolation{IsolationStrict, IsolationDefault, IsolationPermissive} {
		t.Run(level.String(), func(t *testing.T) {
			s := level.Security()
			if !s.ProtectCredentials || !s.ProtectShellHistory || !s.ProtectPackageCredentials {
				t.Fatalf("%s preset = %+v", level, s)
			}
			var got []string
			for _, p := range s.ProtectedPaths(home) {
				got = append(got, strings.TrimPrefix(p, home+"/"))
			}
			slices.Sort(got)
			if !slices.Equal(got, slices.Compact(slices.Clone(want))) {
				for _, w := range want {
					if !slices.Contains(got, w) {
						t.Errorf("no longer protected: %s", w)
					}
				}
				for _, g := range got {
					if !slices.Contains(want, g) {
						t.Errorf("newly protected, not in shellHistoryAdded: %s", g)
					}
				}
			}
		})
	}
}

// Each of the three credential switches protects its own list and only
// it; the lists do not overlap.
func TestProtectionSplitSwitches(t *testing.T) {
	home := filepath.Join(t.TempDir(), "no-such-home")
	rel := func(s SecurityConfig) []string {
		var out []string
		for _, p := range s.ProtectedPaths(home) {
			out = append(out, strings.TrimPrefix(p, home+"/"))
		}
		return out
	}
	cases := []struct {
		name     string
		sec      SecurityConfig
		has, not []string
	}{
		{"credentials", SecurityConfig{ProtectCredentials: true},
			[]string{".ssh", ".gnupg", ".netrc", ".git-credentials", ".config/gh", ".docker/config.json"},
			[]string{".bash_history", ".npmrc", ".pypirc", ".cargo/credentials.toml"}},
		{"shell history", SecurityConfig{ProtectShellHistory: true},
			[]string{".bash_history", ".zsh_history", ".local/share/fish/fish_history", ".python_history", ".psql_history", ".ipython/profile_default/history.sqlite"},
			[]string{".ssh", ".npmrc", ".netrc"}},
		{"package credentials", SecurityConfig{ProtectPackageCredentials: true},
			[]string{".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".config/pip/pip.conf", ".m2/settings.xml", ".cache/huggingface/token"},
			[]string{".ssh", ".netrc", ".bash_history", ".docker/config.json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := rel(c.sec)
			for _, p := range c.has {
				if !slices.Contains(got, p) {
					t.Errorf("%s not protected", p)
				}
			}
			for _, p := range c.not {
				if slices.Contains(got, p) {
					t.Errorf("%s protected by the wrong switch", p)
				}
			}
		})
	}
	seen := map[string]string{}
	for name, l := range map[string][]string{"credentials": credentialPaths, "history": shellHistoryPaths, "package": packageCredentialPaths} {
		for _, p := range l {
			if other, dup := seen[p]; dup {
				t.Errorf("%s is in both the %s and the %s list", p, other, name)
			}
			seen[p] = name
		}
	}
}

// The credential scan of the curated directories runs under either
// credential switch, and a switch turned off opens what its own list
// names even where the scan flags the name.
func TestProtectionSplitScan(t *testing.T) {
	home := t.TempDir()
	for _, f := range []string{".cargo/credentials.toml", ".cargo/auth/token"} {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	listed := filepath.Join(home, ".cargo/credentials.toml")
	scanned := filepath.Join(home, ".cargo/auth/token")
	cases := []struct {
		name           string
		sec            SecurityConfig
		listed, scanOn bool
	}{
		{"both", SecurityConfig{ProtectCredentials: true, ProtectPackageCredentials: true}, true, true},
		{"credentials only", SecurityConfig{ProtectCredentials: true}, false, true},
		{"package credentials only", SecurityConfig{ProtectPackageCredentials: true}, true, true},
		{"shell history only", SecurityConfig{ProtectShellHistory: true}, false, false},
		{"none", SecurityConfig{}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.sec.ProtectedPaths(home)
			if slices.Contains(got, listed) != c.listed {
				t.Errorf("%s protected = %v, want %v: %q", listed, !c.listed, c.listed, got)
			}
			if slices.Contains(got, scanned) != c.scanOn {
				t.Errorf("scanned %s protected = %v, want %v: %q", scanned, !c.scanOn, c.scanOn, got)
			}
		})
	}
}

// Overrides of the new switches layer like the old ones.
func TestSecurityOverridesNewSwitches(t *testing.T) {
	yes, no := true, false
	base := IsolationDefault.Security()
	got := base.With(SecurityOverrides{
		ProtectShellHistory: &no, ProtectPackageCredentials: &no,
		AllowNPU: &yes, AllowHardware: &yes, AllowTCCPrompts: &yes,
	}.With(SecurityOverrides{ProtectShellHistory: &yes}))
	want := base
	want.ProtectShellHistory, want.ProtectPackageCredentials = true, false
	want.AllowNPU, want.AllowHardware, want.AllowTCCPrompts = true, true, true
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, l := range []Isolation{IsolationStrict, IsolationDefault, IsolationPermissive} {
		if s := l.Security(); s.AllowNPU || s.AllowHardware || s.AllowTCCPrompts || s.AllowGPU {
			t.Errorf("%s preset opens a device class or prompts: %+v", l, s)
		}
	}
}
