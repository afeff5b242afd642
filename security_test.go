package moat

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/spec"
)

func TestIsolationPresets(t *testing.T) {
	tests := []struct {
		level    Isolation
		name     string
		userHome bool
	}{
		{IsolationStrict, "strict", true},
		{IsolationDefault, "default", true},
		{IsolationPermissive, "permissive", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Isolation
			err := got.UnmarshalText([]byte(tt.name))
			if err != nil || got != tt.level || got.String() != tt.name {
				t.Fatalf("UnmarshalText(%q) = %v, %v", tt.name, got, err)
			}
			s := tt.level.Security()
			if s.ProtectUserHome != tt.userHome || !s.ProtectCredentials || !s.ProtectCloudConfig ||
				!s.ProtectBrowserData || !s.ProtectKeychains || s.AllowGPU {
				t.Errorf("%s preset = %+v", tt.name, s)
			}
		})
	}
	if iso := IsolationStrict; iso.UnmarshalText([]byte("lax")) == nil || iso != IsolationStrict {
		t.Error("UnmarshalText accepted an unknown level, or changed the level")
	}
	if _, err := New(Config{Isolation: 7}); err == nil {
		t.Error("New accepted an unknown isolation level")
	}
}

func TestSecurityLayering(t *testing.T) {
	yes, no := true, false
	base := IsolationDefault.Security()
	file := SecurityOverrides{ProtectCredentials: &no, AllowGPU: &yes}
	flags := SecurityOverrides{ProtectCredentials: &yes}
	got := base.With(file.With(flags))
	if !got.ProtectCredentials || !got.AllowGPU || !got.ProtectUserHome {
		t.Errorf("preset, then file, then flags = %+v", got)
	}
	if got := base.With(SecurityOverrides{}); got != base {
		t.Errorf("empty overrides changed %+v to %+v", base, got)
	}
}

func TestProtectedPathsCoverTheLists(t *testing.T) {
	home := "/home/u"
	all := IsolationStrict.Security().ProtectedPaths(home)
	for _, rel := range []string{
		".ssh", ".gnupg", ".netrc", ".git-credentials", ".config/gh", ".docker/config.json", ".npmrc",
		".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".bash_history", ".zsh_history",
		".aws", ".azure", ".config/gcloud", ".kube", ".oci", ".config/doctl",
		".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
		".local/share/keyrings", ".password-store", ".local/share/kwalletd",
	} {
		if !slices.Contains(all, filepath.Join(home, rel)) {
			t.Errorf("%s is not protected", rel)
		}
	}
	if got := (SecurityConfig{ProtectUserHome: true, AllowGPU: true}).ProtectedPaths(home); len(got) != 0 {
		t.Errorf("no list switched on, yet %q", got)
	}
	only := SecurityConfig{ProtectCloudConfig: true}.ProtectedPaths(home)
	if !slices.Contains(only, home+"/.aws") || slices.Contains(only, home+"/.ssh") {
		t.Errorf("cloud only = %q", only)
	}
}

func TestExposure(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, d := range []string{".local/lib", ".local/share/Trash", ".cache/pip", ".cache/thumbnails", ".ssh", ".cargo/bin", "proj", ".config/gh"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n"), 0o644)
	os.Symlink(filepath.Join(home, "proj"), filepath.Join(home, ".aws")) // a protected link
	home, _ = filepath.EvalSymlinks(home)

	t.Run("strict exposes nothing of the home", func(t *testing.T) {
		ex := viewOf(Config{})
		if len(ex.HomeRead) != 0 || ex.HideHome != "" || len(hostview.Env(ex, spec.LevelStrict)) != 0 {
			t.Errorf("%+v", ex)
		}
		if !slices.Contains(ex.Protected, home+"/.ssh") {
			t.Errorf("~/.ssh not protected: %q", ex.Protected)
		}
	})
	t.Run("a protected link protects its target", func(t *testing.T) {
		ex := viewOf(Config{})
		if !slices.Contains(ex.Protected, home+"/.aws") || !slices.Contains(ex.Protected, home+"/proj") {
			t.Errorf("protected %q", ex.Protected)
		}
	})
	t.Run("default reads the curated list", func(t *testing.T) {
		ex := viewOf(Config{Isolation: IsolationDefault})
		for _, want := range []string{home + "/.local/lib", home + "/.cargo", home + "/.gitconfig"} {
			if !slices.Contains(ex.HomeRead, want) {
				t.Errorf("%s not readable: %q", want, ex.HomeRead)
			}
		}
		for _, hidden := range []string{home, home + "/proj", home + "/.local", home + "/.local/share/Trash", home + "/.cache"} {
			if slices.Contains(ex.HomeRead, hidden) {
				t.Errorf("%s exposed: %q", hidden, ex.HomeRead)
			}
		}
		env := hostview.Env(ex, spec.LevelDefault)
		for _, want := range []string{"GIT_CONFIG_GLOBAL=" + home + "/.gitconfig", "PYTHONUSERBASE=" + home + "/.local"} {
			if !slices.Contains(env, want) {
				t.Errorf("env %q lacks %s", env, want)
			}
		}
	})
	t.Run("default without home protection reads the home", func(t *testing.T) {
		sec := IsolationDefault.Security()
		sec.ProtectUserHome = false
		ex := viewOf(Config{Isolation: IsolationDefault, Security: &sec})
		if !slices.Equal(ex.HomeRead, []string{home}) {
			t.Errorf("homeRead %q", ex.HomeRead)
		}
	})
	t.Run("permissive with home protection hides it", func(t *testing.T) {
		sec := IsolationPermissive.Security()
		sec.ProtectUserHome = true
		ex := viewOf(Config{Isolation: IsolationPermissive, Security: &sec})
		if ex.HideHome != home || !slices.Contains(ex.HomeRead, home+"/.local/lib") {
			t.Errorf("%+v", ex)
		}
	})
	t.Run("an explicit grant beats a protection", func(t *testing.T) {
		ex := viewOf(Config{Grants: []Grant{{Path: home + "/.ssh", Access: READ}}})
		if slices.Contains(ex.Protected, home+"/.ssh") {
			t.Error("~/.ssh still protected although granted by name")
		}
		if !slices.Contains(ex.Protected, home+"/.config/gh") {
			t.Error("other protections dropped")
		}
	})
	t.Run("switched off", func(t *testing.T) {
		sec := SecurityConfig{}
		ex := viewOf(Config{Security: &sec})
		// moat's own state directory (run journals, quarantine) and the
		// root of the kept cache stores (each sandbox sees only its own
		// store) are not protections the switches govern: they stay out
		// of every view.
		root, err := moatStateRoot()
		if err != nil {
			t.Fatal(err)
		}
		want := []string{root, (&Sandbox{}).caches.Root(cacheLayout)}
		if !slices.Equal(ex.Protected, want) {
			t.Errorf("protected %q with every protection off; want only moat's state directory and the cache stores' root %q", ex.Protected, want)
		}
	})
}

// viewOf is what a sandbox with cfg sees of the homes.
func viewOf(cfg Config) spec.View {
	s := &Sandbox{cfg: cfg}
	return protectStateRoot(homeView(&s.cfg), &s.caches)
}
