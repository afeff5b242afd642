package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moat trust pins, lists and removes; its mistakes are usage errors.
func TestMoatTrust(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o700)
	env := []string{"XDG_STATE_HOME=" + state}
	f := filepath.Join(dir, "moat.toml")
	os.WriteFile(f, []byte("isolation = \"strict\"\n"), 0o600)
	real, _ := filepath.EvalSymlinks(f)
	steps := []struct {
		args   []string
		code   int
		stdout string // a fragment of stdout
		stderr string // a fragment of stderr
	}{
		{[]string{"trust"}, 2, "", "missing FILE"},
		{[]string{"trust", "--list", "x"}, 2, "", "no arguments"},
		{[]string{"trust", "--list", "--remove", "x"}, 2, "", "exclude each other"},
		{[]string{"trust", filepath.Join(dir, "missing")}, 2, "", "no such file"},
		{[]string{"trust", dir}, 2, "", "not a regular file"},
		{[]string{"trust", f}, 0, "trusted ", ""},
		{[]string{"trust", "--list"}, 0, real, ""},
		{[]string{"trust", "--remove", f}, 0, "", ""},
		{[]string{"trust", "--remove", f}, 2, "", "not trusted"},
		{[]string{"trust", "--forget-place", dir}, 2, "", "not a place"},
	}
	for _, s := range steps {
		r := runMoat(t, env, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout, s.stdout) || !strings.Contains(r.stderr, s.stderr) {
			t.Errorf("moat %s: code %d stdout %q stderr %q; want %d, %q, %q", strings.Join(s.args, " "), r.code, r.stdout, r.stderr, s.code, s.stdout, s.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(state, "moat", "trusted")); strings.Contains(string(b), real) {
		t.Errorf("removed pin still stored: %q", b)
	}
}
