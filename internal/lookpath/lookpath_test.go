package lookpath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, file, path, want string
	}{
		{"found", "tool", "/nonexistent:" + dir, exe},
		{"not executable", "data", dir, ""},
		{"relative entries ignored", "tool", ".:" + "rel", ""},
		{"empty path", "tool", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Find(tc.file, tc.path)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Find found %q", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Find = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
