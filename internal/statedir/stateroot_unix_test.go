//go:build unix

package statedir

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStateRootCandidates: the order of the places moat's state root may
// live, for each state of HOME; never the system temporary directory.
func TestStateRootCandidates(t *testing.T) {
	uid := 4242 // no /run/user entry of this uid
	pw := func() string { return "/home/svc" }
	last := "/var/tmp/moat-state-" + strconv.Itoa(uid)
	cases := []struct {
		name, xdg, home string
		passwd          func() string
		want            []string
	}{
		{"XDG and HOME", "/x/state", "/home/u", pw, []string{"/x/state/moat", "/home/u/.local/state/moat", "/home/svc/.local/state/moat", last}},
		{"HOME unset", "", "", pw, []string{"/home/svc/.local/state/moat", last}},
		{"HOME relative, XDG relative", "rel", "rel/home", pw, []string{"/home/svc/.local/state/moat", last}},
		{"HOME is the passwd home", "", "/home/svc/", pw, []string{"/home/svc/.local/state/moat", last}},
		{"no passwd entry", "", "", func() string { return "" }, []string{last}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range StateRootCandidates(tc.xdg, tc.home, tc.passwd, uid) {
				got = append(got, c.Path)
				if c.Shared != (c.Path == last) {
					t.Errorf("%s: Shared = %v", c.Path, c.Shared)
				}
				if strings.HasPrefix(c.Path, os.TempDir()+"/") || strings.HasPrefix(c.Path, "/tmp/") {
					t.Errorf("%s lies in the system temporary directory", c.Path)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestMakeSharedStateRoot: in a directory others may write, the state
// root is used only when it is this user's private directory reached
// through no link; a planted link, a file, a directory others may enter
// or another user's directory is refused, never repaired.
func TestMakeSharedStateRoot(t *testing.T) {
	uid := os.Geteuid()
	cases := []struct {
		name  string
		setup func(t *testing.T, p string)
		uid   int
		ok    bool
	}{
		{"made fresh", func(*testing.T, string) {}, uid, true},
		{"already ours", func(t *testing.T, p string) { mustDo(t, os.Mkdir(p, 0o700)) }, uid, true},
		{"a planted link to a private directory", func(t *testing.T, p string) {
			d := filepath.Join(filepath.Dir(p), "elsewhere")
			mustDo(t, os.Mkdir(d, 0o700))
			mustDo(t, os.Symlink(d, p))
		}, uid, false},
		{"a file", func(t *testing.T, p string) { mustDo(t, os.WriteFile(p, nil, 0o600)) }, uid, false},
		{"open to others", func(t *testing.T, p string) { mustDo(t, os.Mkdir(p, 0o700)); mustDo(t, os.Chmod(p, 0o755)) }, uid, false},
		{"another user's", func(t *testing.T, p string) { mustDo(t, os.Mkdir(p, 0o700)) }, uid + 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			mustDo(t, err)
			p := filepath.Join(dir, "moat-state-x")
			tc.setup(t, p)
			err = MakeSharedStateRoot(p, tc.uid)
			if (err == nil) != tc.ok {
				t.Fatalf("MakeSharedStateRoot = %v, want ok=%v", err, tc.ok)
			}
			if tc.ok {
				fi, err := os.Lstat(p)
				if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
					t.Fatalf("made %v, %v", fi, err)
				}
			}
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
