package homecontrol

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPaths(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "proj.code-workspace"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := Paths(home, "/usr/bin:"+home+"/go/bin:relative/bin:"+home+":/opt/x")
	tests := []struct {
		rel  string
		want bool
	}{
		{".bashrc", true},
		{".zshenv", true},
		{".config/fish", true},
		{".config/autostart", true},
		{".config/systemd", true},
		{".local/bin", true},
		{".gitconfig", true},
		{".config/git", true},
		{".npmrc", true},              // the control-file table
		{".cargo/config.toml", true},  // a nested row
		{"proj.code-workspace", true}, // a wildcard row, existing
		{"go/bin", true},              // on PATH
		{"notes.txt", false},
		{".moat-deny", false}, // a wildcard row, missing: not enumerable
		{"relative/bin", false},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			if has := slices.Contains(got, filepath.Join(home, tt.rel)); has != tt.want {
				t.Errorf("Paths holds %s: %v, want %v", tt.rel, has, tt.want)
			}
		})
	}
	if slices.Contains(got, home) {
		t.Error("Paths holds the home itself (a PATH entry that is the home)")
	}
	for _, bad := range []string{"", "relative"} {
		if p := Paths(bad, "/usr/bin"); p != nil {
			t.Errorf("Paths(%q) = %q, want none", bad, p)
		}
	}
}

// FuzzPaths: any PATH value gives only absolute, clean paths strictly
// inside the home.
func FuzzPaths(f *testing.F) {
	for _, s := range []string{"", "/usr/bin:/bin", "/home/u/bin::/home/u/.local/bin", "/home/u", "/home/u/../etc", "rel:./x", "/home/u/a/../../../etc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pathEnv string) {
		for _, p := range Paths("/home/u", pathEnv) {
			if filepath.Clean(p) != p || !strings.HasPrefix(p, "/home/u/") {
				t.Fatalf("Paths(%q) gave %q", pathEnv, p)
			}
		}
	})
}
