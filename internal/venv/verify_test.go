package venv_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/venv"
)

func TestRequirementName(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"numpy", "numpy", true},
		{"Scikit_Learn[all]==1.4", "scikit-learn", true},
		{"pandas>=2", "pandas", true},
		{"zope.interface ; python_version>'3'", "zope-interface", true},
		{"pkg @ https://example.invalid/pkg.whl", "pkg", true},
		{"a__b--c", "a-b-c", true},
		{"./pkg.whl", "", false},
		{"https://example.invalid/pkg.whl", "", false},
		{"-e", "", false},
		{"pkg/..", "", false},
		{"_pkg", "", false},
	} {
		got, err := venv.RequirementName(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("RequirementName(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestDistName(t *testing.T) {
	for in, want := range map[string]string{
		"moat_esc_victim-1.0.dist-info": "moat-esc-victim",
		"PyYAML-6.0.dist-info":          "pyyaml",
		"numpy-1.24.2.egg-info":         "numpy",
		"Foo.egg-info":                  "foo",
		"numpy":                         "",
		"-1.0.dist-info":                "",
		"a b-1.0.dist-info":             "",
	} {
		if got := venv.DistName(in); got != want {
			t.Errorf("DistName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The check reads names only: a package whose metadata directory is
// missing is reported, one whose module alone is there (a shadow pip's
// work) is not taken for installed.
func TestCheckInstalledByNames(t *testing.T) {
	sp := t.TempDir()
	for _, d := range []string{"present-1.0.dist-info", "present", "shadowed"} {
		os.Mkdir(filepath.Join(sp, d), 0o755)
	}
	if err := venv.CheckInstalled([]string{sp}, nil, []string{"present>=1", "gone; python_version < '3'"}); err != nil {
		t.Fatalf("an installed package: %v", err)
	}
	err := venv.CheckInstalled([]string{sp}, nil, []string{"present", "shadowed"})
	if err == nil || !strings.Contains(err.Error(), "shadowed is not installed") {
		t.Fatalf("a module without metadata: %v", err)
	}
}

// FuzzRequirementName: an accepted requirement yields a canonical name
// (lower case, single dashes, no leading or trailing dash), and the name
// survives canonicalising again.
func FuzzRequirementName(f *testing.F) {
	for _, s := range []string{"numpy", "A_b.C-d[x]>=1", "pkg @ file:///x", "./x", "a;b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := venv.RequirementName(s)
		if err != nil {
			return
		}
		if n == "" || n != strings.ToLower(n) || strings.Contains(n, "--") || strings.HasPrefix(n, "-") || strings.HasSuffix(n, "-") ||
			strings.ContainsAny(n, "_. ") || venv.CanonicalName(n) != n {
			t.Fatalf("RequirementName(%q) = %q", s, n)
		}
	})
}

// FuzzDistName: no entry name panics; what it gives is canonical.
func FuzzDistName(f *testing.F) {
	for _, s := range []string{"a-1.dist-info", "B.egg-info", "x", "-.dist-info", "a..b-1.egg-info"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n := venv.DistName(s); n != "" && venv.CanonicalName(n) != n {
			t.Fatalf("DistName(%q) = %q", s, n)
		}
	})
}

func TestHostEnv(t *testing.T) {
	got := venv.HostEnv([]string{"PATH=/usr/bin", "PYTHONPATH=.", "PYTHONSTARTUP=/x", "PYTHONHOME=/h", "PIP_INDEX_URL=http://evil", "VIRTUAL_ENV=/v", "UV_INDEX_URL=x", "LANG=C.UTF-8", "HOME=/home/u", "LD_PRELOAD=/x.so"}, "UV_CACHE_DIR=/c")
	want := []string{"PATH=/usr/bin", "LANG=C.UTF-8", "HOME=/home/u", "UV_CACHE_DIR=/c"}
	if !slices.Equal(got, want) {
		t.Fatalf("HostEnv = %q, want %q", got, want)
	}
}
