package runjournal

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/fileid"
)

// TestQuarantineCopyBudget: a copy across file systems is bounded. A
// sparse file of the bound's size is copied; one byte more, or hard links
// whose sizes add up past it, are refused, the partial copy removed and
// the entry left where it was. Control: the two directories lie on
// different file systems, so that the copy path is the one taken.
func TestQuarantineCopyBudget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int64 // one file, then links to it when more than one
		ok    bool
	}{
		{"at the bound", []int64{maxQuarantineCopyBytes}, true},
		{"one byte past", []int64{maxQuarantineCopyBytes + 1}, false},
		{"links past the bound", []int64{maxQuarantineCopyBytes / 2, 0, 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			place, err := os.MkdirTemp("/dev/shm", "moat-qb-")
			if err != nil {
				t.Fatalf("control: no tmpfs to put a place on: %v", err)
			}
			defer os.RemoveAll(place)
			root := t.TempDir()
			if err := os.Chmod(root, 0o700); err != nil {
				t.Fatal(err)
			}
			if pd, _, _ := fileid.Identity(place); func() bool { rd, _, _ := fileid.Identity(root); return pd == rd }() {
				t.Fatalf("control: %s and %s are on one file system", place, root)
			}
			d := filepath.Join(place, ".vscode")
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			first := filepath.Join(d, "f0")
			if err := os.WriteFile(first, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(first, tc.sizes[0]); err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(tc.sizes); i++ {
				if err := os.Link(first, filepath.Join(d, fmt.Sprintf("f%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			dest, err := quarantine(root, "0123456789ab", place, d, ".vscode", newCopyBudget())
			if tc.ok {
				if err != nil {
					t.Fatalf("refused at the bound: %v", err)
				}
				if fi, err := os.Stat(filepath.Join(dest, "f0")); err != nil || fi.Size() != tc.sizes[0] {
					t.Errorf("copy: %v %v", fi, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "more than") {
				t.Fatalf("copied past the bound: %q %v", dest, err)
			}
			if _, err := os.Lstat(first); err != nil {
				t.Errorf("the original is gone after a refused copy: %v", err)
			}
			if entries, _ := os.ReadDir(quarantineDir(root, "0123456789ab", place)); len(entries) != 0 {
				t.Errorf("a partial copy is left in the quarantine: %v", entries)
			}
		})
	}
}
