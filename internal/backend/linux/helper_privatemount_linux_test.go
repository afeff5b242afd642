package linux

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// What a sandbox left in its private /tmp (which outlives a zygote) must
// not move a later mount point, nor make the zygote create anything
// outside: links and files in the way are replaced, never followed.
func TestPrivateMountPointFollowsNothing(t *testing.T) {
	cases := []struct {
		name  string
		plant func(t *testing.T, tmp, outside string)
		path  string
		dir   bool
	}{
		{"link to a directory on the way", func(t *testing.T, tmp, outside string) {
			must(t, os.Symlink(outside, filepath.Join(tmp, "moat-x")))
		}, "/tmp/moat-x/home", true},
		{"link as the mount point", func(t *testing.T, tmp, outside string) {
			must(t, os.MkdirAll(filepath.Join(tmp, "moat-x"), 0o755))
			must(t, os.Symlink(outside, filepath.Join(tmp, "moat-x", "home")))
		}, "/tmp/moat-x/home", true},
		{"link as a file mount point", func(t *testing.T, tmp, outside string) {
			must(t, os.Symlink(filepath.Join(outside, "f"), filepath.Join(tmp, "shared.txt")))
		}, "/tmp/shared.txt", false},
		{"file where a directory belongs", func(t *testing.T, tmp, outside string) {
			must(t, os.WriteFile(filepath.Join(tmp, "moat-x"), nil, 0o644))
		}, "/tmp/moat-x/home", true},
		{"fifo where a file belongs", func(t *testing.T, tmp, outside string) {
			must(t, unix.Mkfifo(filepath.Join(tmp, "shared.txt"), 0o644))
		}, "/tmp/shared.txt", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			tmp := filepath.Join(root, "tmp")
			must(t, os.Mkdir(tmp, 0o700))
			tc.plant(t, tmp, outside)
			fd, err := privateMountPoint(root, tc.path, tc.dir)
			if err != nil {
				t.Fatalf("privateMountPoint: %v", err)
			}
			unix.Close(fd)
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("something was created outside: %v", entries)
			}
			fi, err := os.Lstat(root + tc.path)
			switch {
			case err != nil:
				t.Fatalf("no mount point: %v", err)
			case tc.dir && !fi.IsDir(), !tc.dir && !fi.Mode().IsRegular():
				t.Errorf("mount point is %v", fi.Mode())
			}
			// Control: following the planted link would have reached outside.
		})
	}
	// A directory the sandbox made where a file's mount point belongs is
	// its work: not removed, the bind fails (and an optional one is left out).
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "tmp", "shared.txt", "work"), 0o755))
	if fd, err := privateMountPoint(root, "/tmp/shared.txt", false); err == nil {
		unix.Close(fd)
		t.Errorf("a directory in the way was taken as a file mount point")
	}
	if _, err := os.Stat(filepath.Join(root, "tmp", "shared.txt", "work")); err != nil {
		t.Errorf("the sandbox's directory was removed: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// File mount points after the first are hard links to it, so a start
// with many shared-temp files allocates one inode; what the sandbox left
// at a later name is still replaced, never followed or reused.
func TestPrivateTreeLinksFileMountPoints(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	tmp := filepath.Join(root, "tmp")
	must(t, os.Mkdir(tmp, 0o700))
	must(t, os.Symlink(filepath.Join(outside, "f"), filepath.Join(tmp, "b")))
	pt := newPrivateTree(root)
	defer pt.close()
	for _, name := range []string{"a", "b", "c", "d"} {
		fd, err := pt.mountPoint("/tmp/"+name, false)
		if err != nil {
			t.Fatalf("mountPoint %s: %v", name, err)
		}
		unix.Close(fd)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("something was created outside: %v", entries)
	}
	ino := func(name string) (uint64, uint64) {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(tmp, name), &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			t.Fatalf("%s is not a regular file: %o", name, st.Mode)
		}
		return st.Ino, uint64(st.Nlink)
	}
	seed, n := ino("a")
	if n != 3 {
		t.Errorf("the seed has %d links, want 3 (a, c, d)", n)
	}
	for _, name := range []string{"c", "d"} {
		if i, _ := ino(name); i != seed {
			t.Errorf("%s is not a link to the first mount point", name)
		}
	}
	// The planted link was replaced by a file of its own.
	if i, _ := ino("b"); i == seed {
		t.Errorf("the name the sandbox had taken became a link to the seed")
	}
}

// privateMountPoint makes one mount point, as the first bind of a tree does.
func privateMountPoint(root, path string, dir bool) (int, error) {
	t := newPrivateTree(root)
	defer t.close()
	return t.mountPoint(path, dir)
}
