package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// TestExecHome: moat exec's home is the user's, read-only; under a
// writable home its run-code entries are read-only (existing) or denied
// (missing), unless a pattern names them exactly; the cwd's missing
// control names are denied where the patterns protect them.
func TestExecHome(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	if err := os.MkdirAll(filepath.Join(base, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	cwd := filepath.Join(home, "proj")
	for _, d := range []string{cwd, filepath.Join(base, "elsewhere")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".bashrc", ".config/Code/User/settings.json", ".local/share/x", "notes", "proj/x.json", "go/x"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, f), []byte("rc"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(list []string, rel string) bool { return slices.Contains(list, filepath.Join(home, rel)) }
	tests := []struct {
		name  string
		doc   string
		cwd   string
		check func(t *testing.T, e *Exec)
	}{
		{"read-only home, HOME set", `{"command":["true"]}`, cwd, func(t *testing.T, e *Exec) {
			if !slices.ContainsFunc(e.Config.Grants, func(g moat.Grant) bool { return g.Path == home && !g.Access.CanWrite() }) {
				t.Errorf("grants %v: want a read grant of the home", e.Config.Grants)
			}
			if !slices.Contains(e.Config.Env.Set, "HOME="+home) {
				t.Errorf("env %q: want HOME=%s", e.Config.Env.Set, home)
			}
			if in(e.Config.ReadOnly, ".bashrc") || in(e.Config.Deny, ".zshrc") {
				t.Error("a read-only home got guards")
			}
		}},
		{"the document's HOME wins", `{"command":["true"],"env":{"set":{"HOME":"/srv/h"}}}`, cwd, func(t *testing.T, e *Exec) {
			if slices.Contains(e.Config.Env.Set, "HOME="+home) {
				t.Errorf("env %q: the document's HOME lost", e.Config.Env.Set)
			}
		}},
		{"writable home: sealed, hidden entries read-only, no placeholder", `{"command":["true"],"filesystem":{"writable":["~"]}}`, cwd, func(t *testing.T, e *Exec) {
			if !slices.Contains(e.Config.Seal, home) {
				t.Errorf("seal %q: want the home sealed", e.Config.Seal)
			}
			for _, rel := range []string{".bashrc", ".config", ".local"} {
				if !in(e.Config.ReadOnly, rel) {
					t.Errorf("read-only %q: want ~/%s", e.Config.ReadOnly, rel)
				}
			}
			if in(e.Config.ReadOnly, "notes") || in(e.Config.ReadOnly, "proj") || in(e.Config.ReadOnly, ".config/go") {
				t.Errorf("read-only %q: a non-hidden entry, or one inside a read-only hidden one", e.Config.ReadOnly)
			}
			for _, d := range e.Config.Deny {
				if strings.HasPrefix(d, home+"/") && !strings.HasPrefix(d, home+"/go/") {
					t.Errorf("deny %q: a placeholder in the home (only ~/go/bin, in an existing non-hidden directory, wants one)", d)
				}
			}
			if !in(e.Config.Deny, "go/bin") {
				t.Errorf("deny %q: want ~/go/bin, a missing PATH entry in a writable directory", e.Config.Deny)
			}
		}},
		{"a pattern naming a hidden place opens it, its run-code entries stay guarded", `{"command":["true"],"filesystem":{"writable":["~","~/.config"]}}`, cwd, func(t *testing.T, e *Exec) {
			if in(e.Config.ReadOnly, ".config") {
				t.Errorf("read-only %q: ~/.config is named", e.Config.ReadOnly)
			}
			for _, rel := range []string{".config/go", ".config/user-tmpfiles.d", ".config/autostart", ".config/lesskey"} {
				if !in(e.Config.Deny, rel) {
					t.Errorf("deny %q: want ~/%s", e.Config.Deny, rel)
				}
			}
			if !in(e.Config.ReadOnly, ".local") {
				t.Errorf("read-only %q: want ~/.local", e.Config.ReadOnly)
			}
		}},
		{"a pattern that names an entry exactly lifts its guard", `{"command":["true"],"filesystem":{"writable":["~","~/.bashrc","~/.config/fish"]}}`, cwd, func(t *testing.T, e *Exec) {
			if in(e.Config.ReadOnly, ".bashrc") || in(e.Config.Deny, ".config/fish") {
				t.Errorf("read-only %q, deny %q: the named entries are guarded", e.Config.ReadOnly, e.Config.Deny)
			}
			if !in(e.Config.Deny, ".config/nvim") {
				t.Errorf("deny %q: want the others guarded", e.Config.Deny)
			}
		}},
		{"a wildcard does not name a hidden place", `{"command":["true"],"filesystem":{"writable":["*.json"]}}`, home, func(t *testing.T, e *Exec) {
			for _, g := range e.Config.Grants {
				if g.Path == filepath.Join(home, ".config/Code/User/settings.json") && g.Access.CanWrite() {
					t.Errorf("grant %v: writable, by a pattern that names no hidden place", g)
				}
				if g.Path == filepath.Join(home, "proj/x.json") && !g.Access.CanWrite() {
					t.Errorf("grant %v: want it writable (control)", g)
				}
			}
		}},
		{"a denied part of the home gets no guard", `{"command":["true"],"filesystem":{"writable":["~","~/.config"],"deny":["~/.config"]}}`, cwd, func(t *testing.T, e *Exec) {
			if in(e.Config.Deny, ".config/autostart") {
				t.Errorf("deny %q: a path under a denied one is guarded too", e.Config.Deny)
			}
		}},
		{"a broad writable cwd: its control names are denied", `{"command":["true"],"filesystem":{"writable":["."]}}`, cwd, func(t *testing.T, e *Exec) {
			for _, rel := range []string{"proj/.git", "proj/.agents", "proj/.pi", "proj/.heimdall-deny", "proj/.heimdall-local", "proj/.moat-write"} {
				if !in(e.Config.Deny, rel) {
					t.Errorf("deny %q: want ~/%s", e.Config.Deny, rel)
				}
			}
		}},
		{"a writable ancestor of the home keeps it writable", `{"command":["true"],"filesystem":{"writable":["` + base + `"]}}`, cwd, func(t *testing.T, e *Exec) {
			if slices.ContainsFunc(e.Config.Grants, func(g moat.Grant) bool { return g.Path == home }) {
				t.Errorf("grants %v: a read grant of the home inside a writable one", e.Config.Grants)
			}
			if !in(e.Config.ReadOnly, ".bashrc") {
				t.Errorf("read-only %q: want ~/.bashrc guarded", e.Config.ReadOnly)
			}
		}},
		{"an absolute writable ancestor leaves them unprotected", `{"command":["true"],"filesystem":{"writable":["` + home + `"]}}`, cwd, func(t *testing.T, e *Exec) {
			if in(e.Config.Deny, "proj/.agents") {
				t.Errorf("deny %q: want the control names unprotected", e.Config.Deny)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDocument([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			e, err := d.Exec(ExecHost{Environ: []string{"HOME=" + home, "PATH=/usr/bin:" + home + "/go/bin"}, Dir: tt.cwd})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			tt.check(t, e)
		})
	}
	t.Run("an unlistable home leaves the private one", func(t *testing.T) {
		d, _ := ParseDocument([]byte(`{"command":["true"]}`))
		e, err := d.Exec(ExecHost{Environ: []string{"HOME=" + filepath.Join(base, "missing")}, Dir: cwd})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if slices.ContainsFunc(e.Config.Env.Set, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
			t.Errorf("env %q: HOME set to a missing home", e.Config.Env.Set)
		}
	})
}

// FuzzNamedWritable: namedWritable never panics and returns only
// absolute, clean paths.
func FuzzNamedWritable(f *testing.F) {
	for _, s := range []string{"~", "~/.bashrc", ".", "src/", "!x", "**", "/abs/path", "~user", "a/../b", "#c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, n := range namedWritable([]string{p}, "/cwd", "/home/u") {
			if !filepath.IsAbs(n) || filepath.Clean(n) != n {
				t.Fatalf("namedWritable(%q) gave %q", p, n)
			}
		}
	})
}
