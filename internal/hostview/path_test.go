package hostview

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// fakeFS resolves paths from a table: links map a path (or a prefix of
// one) to its target; dirs are the directories that exist.
type fakeFS struct {
	links map[string]string
	dirs  map[string]bool
}

func (f fakeFS) resolve(p string) (string, bool, error) {
	for from, to := range f.links {
		if p == from || strings.HasPrefix(p, from+"/") {
			p = to + strings.TrimPrefix(p, from)
		}
	}
	p = filepath.Clean(p)
	if !f.dirs[p] {
		return "", false, errors.New("no such directory")
	}
	return p, true, nil
}

func TestFilterPath(t *testing.T) {
	fs := fakeFS{
		links: map[string]string{"/bin": "/usr/bin", "/home/u/.cargo": "/data/cargo", "/usr/local/bin/evil": "/home/u/work/bin"},
		dirs: map[string]bool{
			"/usr/bin": true, "/usr/local/go/bin": true, "/usr/local/bin": true, "/usr/sbin": true,
			"/data/cargo/bin": true, "/home/u/.pyenv/shims": true, "/home/u/work/bin": true,
			"/home/u/bin": true, "/tmp/tools": true, "/home/u/rwx/bin": true, "/home/u/.ssh/bin": true,
			"/home/u/state/home/bin": true, "/proc/self": true,
		},
	}
	rules := PathRules{
		Exec:      []string{"/usr", "/bin", "/data/cargo", "/home/u/.pyenv", "/home/u/rwx", "/home/u/work"},
		Writable:  []string{"/home/u/work", "/home/u/state"},
		WriteExec: []string{"/home/u/rwx"},
		Denied:    []string{"/tmp", "/proc", "/home/u/.ssh"},
		System:    SystemPathRoots,
	}
	cases := []struct{ name, in, want string }{
		{"order kept, /usr/local/go/bin ahead of /usr/bin", "/usr/local/go/bin:/usr/bin:/bin", "/usr/local/go/bin:/usr/bin:/bin"},
		{"a system link keeps its spelling", "/bin", "/bin"},
		{"a home link is resolved", "/home/u/.cargo/bin", "/data/cargo/bin"},
		{"curated toolchain kept", "/home/u/.pyenv/shims:/usr/bin", "/home/u/.pyenv/shims:/usr/bin"},
		{"missing entry dropped", "/nonexistent:/usr/bin", "/usr/bin"},
		{"not executable there", "/home/u/bin:/usr/bin", "/usr/bin"},
		{"the working directory, even executable", "/home/u/work/bin:/usr/bin", "/usr/bin"},
		{"a link into the working directory", "/usr/local/bin/evil:/usr/bin", "/usr/bin"},
		{"private directories", "/home/u/state/home/bin", ""},
		{"rwx grant kept", "/home/u/rwx/bin", "/home/u/rwx/bin"},
		{"temp and kernel dirs", "/tmp/tools:/proc/self:/usr/bin", "/usr/bin"},
		{"protected", "/home/u/.ssh/bin:/usr/bin", "/usr/bin"},
		{"relative and empty entries", ":.:bin:/usr/bin", "/usr/bin"},
		{"duplicates once", "/usr/bin:/usr/bin/:/usr/sbin", "/usr/bin:/usr/sbin"},
		{"nothing left", "/nonexistent", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := FilterPath(tc.in, rules, fs.resolve); got != tc.want {
				t.Errorf("FilterPath(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	// Permissive: everything is executable, still not the writable places.
	perm := rules
	perm.Exec = []string{"/"}
	if got := FilterPath("/home/u/bin:/home/u/work/bin:/tmp/tools:/usr/bin", perm, fs.resolve); got != "/home/u/bin:/usr/bin" {
		t.Errorf("permissive: %q", got)
	}
	// Protected paths, as sandboxPath passes them (already resolved), at
	// permissive, where nothing else drops them.
	prot := perm
	prot.Denied = []string{"/tmp", "/proc"}
	prot.Protected = []string{"/home/u/.ssh"}
	if got := FilterPath("/home/u/.ssh/bin:/usr/bin", prot, fs.resolve); got != "/usr/bin" {
		t.Errorf("protected: %q", got)
	}
}
