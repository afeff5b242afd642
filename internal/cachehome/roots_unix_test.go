//go:build unix

package cachehome

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRoots: Open records each root once, and Roots reads back only
// absolute, clean paths, each once; a file that is a link is refused.
func TestRoots(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    []string
	}{
		{"missing", "", nil},
		{"two", "/a/homes\n/b/homes\n", []string{"/a/homes", "/b/homes"}},
		{"junk skipped", "relative\n/a/../b\n\n/c\n/c\n", []string{"/c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			if c.content != "" {
				must(t, os.WriteFile(filepath.Join(d, rootsName), []byte(c.content), 0o600))
			}
			got, err := Roots(d)
			must(t, err)
			if !slices.Equal(got, c.want) {
				t.Fatalf("Roots = %q, want %q", got, c.want)
			}
		})
	}
	l := testLayout(t)
	for _, policy := range []string{"a", "b"} {
		lease, err := Open(l, testProject(t), policy)
		must(t, err)
		must(t, lease.Close(0))
	}
	l2 := Layout{Root: filepath.Join(t.TempDir(), "homes"), Records: l.Records}
	lease, err := Open(l2, testProject(t), "a")
	must(t, err)
	must(t, lease.Close(0))
	got, err := Roots(l.Records)
	must(t, err)
	if !slices.Equal(got, []string{l.Root, l2.Root}) {
		t.Fatalf("Roots after Open = %q, want both roots once", got)
	}
	link := t.TempDir()
	must(t, os.Symlink(filepath.Join(l.Records, rootsName), filepath.Join(link, rootsName)))
	if _, err := Roots(link); err == nil {
		t.Fatal("a roots record that is a link was read")
	}
}

// FuzzRoots: whatever the record holds, Roots returns at most maxRoots
// absolute, clean, distinct paths, none holding a newline.
func FuzzRoots(f *testing.F) {
	f.Add("/a/homes\n/b\n")
	f.Add("x\n/../\n//\n/a\r\n")
	f.Add(strings.Repeat("/a\n", 300))
	f.Fuzz(func(t *testing.T, content string) {
		d := t.TempDir()
		must(t, os.WriteFile(filepath.Join(d, rootsName), []byte(content), 0o600))
		got, err := Roots(d)
		if err != nil {
			return
		}
		if len(got) > maxRoots {
			t.Fatalf("%d roots", len(got))
		}
		seen := map[string]bool{}
		for _, r := range got {
			if !filepath.IsAbs(r) || filepath.Clean(r) != r || seen[r] || strings.Contains(r, "\n") {
				t.Fatalf("root %q", r)
			}
			seen[r] = true
		}
	})
}
