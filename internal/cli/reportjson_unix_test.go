//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// writeReportFile replaces whatever is at the path, a link planted after
// the place was checked included, and never writes through it: the link's
// target keeps its content. The control: a regular file is replaced with
// the report.
func TestWriteReportFileNeverFollows(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		plant func(path string) error
	}{
		{"link to a file", func(p string) error { return os.Symlink(victim, p) }},
		{"dangling link", func(p string) error { return os.Symlink(filepath.Join(dir, "created-through-link"), p) }},
		{"control: regular file", func(p string) error { return os.WriteFile(p, []byte("old"), 0o644) }},
		{"control: nothing", func(string) error { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "r.json")
			_ = os.Remove(path)
			if err := tc.plant(path); err != nil {
				t.Fatal(err)
			}
			if err := writeReportFile(path, []byte("{}\n")); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(path)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Fatalf("report: %v %v, want a regular 0600 file", fi, err)
			}
			if b, _ := os.ReadFile(path); string(b) != "{}\n" {
				t.Errorf("report holds %q", b)
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep" {
				t.Errorf("the link's target was written: %q", b)
			}
			if _, err := os.Lstat(filepath.Join(dir, "created-through-link")); err == nil {
				t.Error("a dangling link's target was created")
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if n := e.Name(); n != "r.json" && n != "victim" {
					t.Errorf("left behind: %s", n)
				}
			}
		})
	}
}
