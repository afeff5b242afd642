package moat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/workdircheck"
)

func TestCheckHome(t *testing.T) {
	fake := t.TempDir()
	t.Setenv("HOME", fake)
	for _, d := range []string{".cache/go-build", ".local/bin", "projects/p", "caches/moat"} {
		if err := os.MkdirAll(filepath.Join(fake, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(fake, "file")
	os.WriteFile(file, nil, 0o644)
	cases := []struct {
		name, dir, wantErr string
	}{
		{"a directory of its own", filepath.Join(fake, "caches/moat"), ""},
		{"outside the home", t.TempDir(), ""},
		{"the real home", fake, "is the home directory"},
		{"a control place", filepath.Join(fake, ".local/bin"), "runs later"},
		{"holds a host cache", filepath.Join(fake, ".cache"), "holds " + filepath.Join(fake, ".cache/go-build")},
		{"missing", filepath.Join(fake, "nope"), "must be an existing directory"},
		{"a file", file, "not a directory"},
		{"the root", "/", "root directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckHome(tc.dir)
			var pe *PlaceError
			var se *SettingError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("CheckHome(%s) = %v, want nil", tc.dir, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "Config.Home") || !errors.As(err, &pe)):
				t.Errorf("CheckHome(%s) = %v, want a PlaceError naming Config.Home with %q", tc.dir, err, tc.wantErr)
			case tc.wantErr != "" && !errors.As(err, &se):
				t.Errorf("CheckHome(%s) = %v, want a *SettingError the CLI names by its flag", tc.dir, err)
			case tc.wantErr != "" && se.Setting != "home":
				t.Errorf("CheckHome(%s): setting %q, want home", tc.dir, se.Setting)
			}
		})
	}
	// Config.Home must not overlap the working directory.
	if _, err := workdircheck.HomeConfig(filepath.Join(fake, "projects/p"), filepath.Join(fake, "projects"), ToolchainPaths); err == nil || !strings.Contains(err.Error(), "overlaps the working directory") {
		t.Errorf("a home inside the working directory: %v", err)
	}
}
