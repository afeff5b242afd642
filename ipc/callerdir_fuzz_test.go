package ipc

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCheckCallerDir: what the check accepts is relative to the caller's
// root, clean, without a component that climbs, and names the same path.
func FuzzCheckCallerDir(f *testing.F) {
	for _, s := range []string{"/", "/work", "/work/../etc", "work", "/a//b", "/a/./b", "/a\x00b", "/.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		rel, err := checkCallerDir(dir)
		if err != nil {
			return
		}
		if strings.HasPrefix(rel, "/") || filepath.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "/../") {
			t.Fatalf("checkCallerDir(%q) = %q", dir, rel)
		}
		want := "/" + rel
		if rel == "." {
			want = "/"
		}
		if want != dir {
			t.Fatalf("checkCallerDir(%q) = %q names another path", dir, rel)
		}
	})
}
