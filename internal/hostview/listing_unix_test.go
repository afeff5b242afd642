//go:build unix

package hostview

import (
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// lstatType is what listings.lookup must answer: os.Lstat's.
func lstatType(p string) (fs.FileMode, bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, false
	}
	return fi.Mode().Type(), true
}

// checkLookups compares lookup with os.Lstat for every name, twice (the
// second answer comes from what the first cached).
func checkLookups(t *testing.T, l listings, dir string, names []string) {
	t.Helper()
	for round := 0; round < 2; round++ {
		for _, n := range names {
			gotT, gotOK := l.lookup(dir, n)
			wantT, wantOK := lstatType(filepath.Join(dir, n))
			if gotT != wantT || gotOK != wantOK {
				t.Errorf("lookup(%s, %q) = %v, %v; os.Lstat says %v, %v", dir, n, gotT, gotOK, wantT, wantOK)
			}
		}
	}
}

func TestListingsAnswerAsLstat(t *testing.T) {
	names := []string{"file", "dir", "link", "dangling", "fifo", "missing", ".", "..", "", "dir/x", "link/"}
	tests := []struct {
		name  string
		extra int  // more files, to pass maxListing
		whole bool // the directory is read whole, not looked up name by name
	}{
		{name: "small directory", whole: true},
		{name: "directory over the listing bound", extra: maxListing, whole: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
			must(os.Mkdir(filepath.Join(dir, "dir"), 0o755))
			must(os.Symlink("file", filepath.Join(dir, "link")))
			must(os.Symlink("nowhere", filepath.Join(dir, "dangling")))
			must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
			for i := 0; i < tc.extra; i++ {
				must(os.WriteFile(filepath.Join(dir, "x"+strconv.Itoa(i)), nil, 0o644))
			}
			f, err := os.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			exact := exactNames(f) // listing_linux.go; false elsewhere
			f.Close()
			if !exact {
				t.Logf("%s may fold case here: every lookup goes to lstat", dir)
			}
			if got := readListing(dir) != nil; got != (tc.whole && exact) {
				t.Fatalf("readListing read the directory whole: %v, want %v", got, tc.whole && exact)
			}
			checkLookups(t, listings{}, dir, names)
			checkLookups(t, listings{}, filepath.Join(dir, "missing"), names) // a directory that is not there
			checkLookups(t, listings{}, filepath.Join(dir, "file"), names)    // nor a directory
		})
	}
}

// TestListingsUnlistableDirectory checks, as an unprivileged user (root
// reads every directory, so as root the test runs itself again as
// nobody), the directories a listing cannot answer for: one that may be
// searched but not read, whose names lstat still finds (a home of mode
// 0711), one that may be neither, and one that may be read but not
// searched, whose listing names entries that no lstat reaches.
func TestListingsUnlistableDirectory(t *testing.T) {
	if dir := os.Getenv("MOAT_LISTING_TEST_DIR"); dir != "" {
		checkLookups(t, listings{}, filepath.Join(dir, "searchable"), []string{"file", "link", "missing"})
		checkLookups(t, listings{}, filepath.Join(dir, "closed"), []string{"file", "missing"})
		checkLookups(t, listings{}, filepath.Join(dir, "readable"), []string{"file", "missing"})
		if _, ok := (listings{}).lookup(filepath.Join(dir, "searchable"), "file"); !ok {
			t.Error("a file in a searchable, unreadable directory was not found") // not what lstat says either
		}
		return
	}
	base, err := os.MkdirTemp("", "moat-listing-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	for _, d := range []string{"searchable", "closed", "readable"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, d, "file"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("file", filepath.Join(base, "searchable", "link")); err != nil {
		t.Fatal(err)
	}
	// Modes last: searchable may be searched, not read; closed neither.
	if err := os.Chmod(filepath.Join(base, "searchable"), 0o311); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(base, "closed"), 0o200); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(base, "readable"), 0o644); err != nil { // listed, but no name looked up
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Setenv("MOAT_LISTING_TEST_DIR", base)
		TestListingsUnlistableDirectory(t)
		return
	}
	// As root: the same test, as nobody, from a copy of this binary that
	// nobody may run (the go tool's build directory is root's alone).
	self := filepath.Join(base, "hostview.test")
	if err := copyFile(os.Args[0], self); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run", "^TestListingsUnlistableDirectory$", "-test.v")
	cmd.Env = []string{"MOAT_LISTING_TEST_DIR=" + base, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
