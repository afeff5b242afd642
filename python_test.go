package moat

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/venv"
)

// The backends parse as internal/venv's, print as they parse, and
// anything else is refused.
func TestParseVenvBackend(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want VenvBackend
		ok   bool
	}{
		{"", VenvAuto, true}, {"auto", VenvAuto, true}, {"uv", VenvUV, true}, {"python", VenvPython, true}, {"conda", VenvAuto, false},
	} {
		b, err := venv.ParseBackend(tc.in)
		got := VenvBackend(b)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseBackend(%q) = %v, %v", tc.in, got, err)
		}
		if tc.ok && tc.in != "" && got.String() != tc.in {
			t.Errorf("%v prints %q", got, got.String())
		}
	}
}

// A venv path that is not absolute and clean is a ConfigError from
// Validate, before anything is looked at.
func TestPythonConfigValidate(t *testing.T) {
	for _, p := range []string{"venv", "/a/../b", "/a/"} {
		err := Config{Python: &PythonConfig{Venv: p}}.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "python venv") {
			t.Errorf("venv %q: %v", p, err)
		}
	}
	if err := (Config{Python: &PythonConfig{}}).Validate(); err != nil {
		t.Errorf("no venv: %v", err)
	}
}

// The cache holds one venv per package set, whatever its order, and a
// pip-writable one apart from the read-only one.
func TestVenvPathInCache(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	m := &VenvManager{CacheDir: t.TempDir()}
	path := func(c VenvConfig) string {
		c.Python = py
		p, err := m.VenvPath(c)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := path(VenvConfig{Packages: []string{"b", "a"}})
	if filepath.Dir(a) != m.CacheDir || a != path(VenvConfig{Packages: []string{"a", "b"}}) {
		t.Fatalf("cache path %q", a)
	}
	if a == path(VenvConfig{Packages: []string{"a"}}) || a == path(VenvConfig{Packages: []string{"a", "b"}, Mutable: true}) || a == path(VenvConfig{Packages: []string{"a", "b"}, SystemSitePackages: true}) {
		t.Fatal("different venvs share a cache path")
	}
	if p := path(VenvConfig{Path: "rel"}); !filepath.IsAbs(p) {
		t.Fatalf("relative path kept: %q", p)
	}
}
