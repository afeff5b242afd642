//go:build unix

package moat

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Paths reached through links are listed again at their canonical
// place, existing or not, and an empty list stays nil.
func TestWithCanonical(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(d, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(d, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"nil", nil, nil},
		{"plain", []string{real}, []string{real}},
		{"link", []string{filepath.Join(d, "link")}, []string{filepath.Join(d, "link"), real}},
		{"under a link", []string{filepath.Join(d, "link", "sub")}, []string{filepath.Join(d, "link", "sub"), filepath.Join(real, "sub")}},
		{"missing under a link", []string{filepath.Join(d, "link", "no", "such")}, []string{filepath.Join(d, "link", "no", "such"), filepath.Join(real, "no", "such")}},
		{"missing", []string{filepath.Join(d, "none")}, []string{filepath.Join(d, "none")}},
		{"duplicates", []string{real, real, filepath.Join(d, "link")}, []string{real, filepath.Join(d, "link")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := withCanonical(tt.in, canonicalPaths(tt.in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("withCanonical(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// The virtual files' contents are bounded (validate.go) and sorted by
// path.
func TestFSPolicyVirtual(t *testing.T) {
	c := Config{VirtualFiles: map[string]string{"/b": "2", "/a": "1"}, HideProc: true}
	f := fsPolicy(&c, nil)
	if len(f.Virtual) != 2 || f.Virtual[0].Path != "/a" || string(f.Virtual[1].Content) != "2" || !f.HideProc {
		t.Errorf("fsPolicy = %+v", f)
	}
	c.VirtualFiles["/big"] = strings.Repeat("x", maxVirtualBytes)
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "virtual files") {
		t.Errorf("contents over the limit: %v", err)
	}
	if f := fsPolicy(&Config{}, nil); !f.Empty() {
		t.Errorf("an empty Config gives %+v", f)
	}
}
