package hostiletree

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// lockedDirs plants, at the top of dir and at depth 40 (past maxDepth, so
// moved up before it is emptied), a directory of each mode that keeps its
// owner from removing what is inside: no write (0500), nothing (0000),
// search only (0100), no read (0300), no search (0600), each holding a
// file and a subdirectory.
func lockedDirs(t *testing.T, dir string) {
	deep := dir
	for i := 0; i < 40; i++ {
		deep = filepath.Join(deep, "d")
	}
	must(t, os.MkdirAll(deep, 0o700))
	for _, at := range []string{dir, deep} {
		for _, m := range []os.FileMode{0o500, 0o000, 0o100, 0o300, 0o600} {
			d := filepath.Join(at, "m"+m.String())
			must(t, os.MkdirAll(filepath.Join(d, "sub"), 0o700))
			must(t, os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o600))
			must(t, os.WriteFile(filepath.Join(d, "sub", "g"), []byte("y"), 0o400))
			must(t, os.Chmod(filepath.Join(d, "sub"), m))
			must(t, os.Chmod(d, m))
		}
	}
	// Every directory of the chain read-only too, from the bottom up:
	// moving one up past maxDepth rewrites its "..", which needs it
	// writable.
	for d := deep; d != dir; d = filepath.Dir(d) {
		must(t, os.Chmod(d, 0o500))
	}
}

// longChain plants a chain of directories whose path is past PATH_MAX
// (4096), made with *at calls (a path that long cannot be named), its
// last directory read-only and holding a FIFO and a socket.
func longChain(t *testing.T, dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	must(t, err)
	name := strings.Repeat("n", 200)
	for i := 0; i < 40; i++ { // 40 * 201 bytes
		must(t, unix.Mkdirat(fd, name, 0o700))
		nfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		must(t, err)
		unix.Close(fd)
		fd = nfd
	}
	must(t, unix.Mkfifoat(fd, "fifo", 0o600))
	must(t, unix.Mknodat(fd, "sock", unix.S_IFSOCK|0o600, 0))
	must(t, unix.Fchmod(fd, 0o500))
	unix.Close(fd)
}

// TestEmptyTrashHostileTrees: each tree a sandbox could leave goes whole,
// within a deadline (a FIFO opened would block), and a link in it is
// removed, never followed: what it points to stays.
func TestEmptyTrashHostileTrees(t *testing.T) {
	cases := []struct {
		name  string
		plant func(t *testing.T, tree, outside string)
	}{
		{"directories their owner cannot write, read or search, at the top and past maxDepth", func(t *testing.T, tree, _ string) { lockedDirs(t, tree) }},
		{"a chain past PATH_MAX ending in a read-only directory with a FIFO and a socket", func(t *testing.T, tree, _ string) { longChain(t, tree) }},
		{"the tree's own directory read-only", func(t *testing.T, tree, _ string) {
			must(t, os.WriteFile(filepath.Join(tree, "f"), nil, 0o600))
			must(t, os.Chmod(tree, 0o500))
		}},
		{"links to a directory and a file outside, in a read-only directory", func(t *testing.T, tree, outside string) {
			must(t, os.Mkdir(filepath.Join(tree, "ro"), 0o700))
			must(t, os.Symlink(outside, filepath.Join(tree, "ro", "dir-link")))
			must(t, os.Symlink(filepath.Join(outside, "keep"), filepath.Join(tree, "ro", "file-link")))
			must(t, os.Chmod(filepath.Join(tree, "ro"), 0o500))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			outside := filepath.Join(base, "outside")
			must(t, os.MkdirAll(filepath.Join(outside, "sub"), 0o700))
			must(t, os.WriteFile(filepath.Join(outside, "keep"), []byte("keep me"), 0o600))
			tree := filepath.Join(base, "tree")
			must(t, os.Mkdir(tree, 0o700))
			c.plant(t, tree, outside)
			trash := filepath.Join(base, "trash")
			must(t, Retire(tree, trash, "tree"))
			done := make(chan error, 1)
			go func() {
				budget := 1 << 20
				done <- EmptyTrash(trash, &budget)
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("EmptyTrash: %v", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("EmptyTrash did not return within 60s (a FIFO opened?)")
			}
			if ents, err := os.ReadDir(trash); err != nil || len(ents) != 0 {
				t.Fatalf("trash not emptied: %v, %v", ents, err)
			}
			if b, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(b) != "keep me" {
				t.Fatalf("a file outside was touched through a link: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(outside, "sub")); err != nil {
				t.Fatalf("a directory outside was emptied through a link: %v", err)
			}
		})
	}
}

// TestRemoveAllFailsOnLockedDirs is the control of the locked-directory
// case: a plain os.RemoveAll stops at the first of them. Root ignores
// directory modes, so it shows something only as an unprivileged user.
func TestRemoveAllFailsOnLockedDirs(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("SKIPPED: root ignores directory modes, so the control cannot show the attack; run as an unprivileged user")
	}
	tree := filepath.Join(t.TempDir(), "tree")
	must(t, os.Mkdir(tree, 0o700))
	lockedDirs(t, tree)
	err := os.RemoveAll(tree)
	if err == nil {
		t.Fatal("control: os.RemoveAll removed the locked tree, so TestEmptyTrashHostileTrees shows nothing")
	}
	t.Logf("control: os.RemoveAll: %v", err)
	budget := 1 << 20
	must(t, Retire(tree, filepath.Join(filepath.Dir(tree), "trash"), "tree"))
	if err := EmptyTrash(filepath.Join(filepath.Dir(tree), "trash"), &budget); err != nil {
		t.Fatalf("EmptyTrash after the failed RemoveAll: %v", err)
	}
}

// TestEmptyTrashBudget: a removal larger than its budget stops with
// ErrBudget, having spent no more than the budget, and later calls go on
// until the trash is empty.
func TestEmptyTrashBudget(t *testing.T) {
	base := t.TempDir()
	tree := filepath.Join(base, "tree")
	for i := 0; i < 10; i++ {
		d := filepath.Join(tree, "d"+strconv.Itoa(i))
		must(t, os.MkdirAll(d, 0o700))
		for j := 0; j < 500; j++ {
			must(t, os.WriteFile(filepath.Join(d, "f"+strconv.Itoa(j)), nil, 0o600))
		}
		must(t, os.Chmod(d, 0o500))
	}
	trash := filepath.Join(base, "trash")
	must(t, Retire(tree, trash, "tree"))
	calls := 0
	for {
		calls++
		if calls > 20 {
			t.Fatal("20 calls of 1000 did not remove 5011 entries")
		}
		budget := 1000
		err := EmptyTrash(trash, &budget)
		if budget < 0 {
			t.Fatalf("spent %d past the budget", -budget)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, ErrBudget) {
			t.Fatal(err)
		}
	}
	if calls < 6 {
		t.Fatalf("done in %d calls of 1000 entries: the budget was not kept", calls)
	}
	if ents, _ := os.ReadDir(trash); len(ents) != 0 {
		t.Fatalf("trash not emptied: %v", ents)
	}
}

// TestRemoveTree: a locked tree (its own directory 0500 too) goes without
// a trash, and so do a file and a missing path.
func TestRemoveTree(t *testing.T) {
	base := t.TempDir()
	tree := filepath.Join(base, "tree")
	must(t, os.Mkdir(tree, 0o700))
	lockedDirs(t, tree)
	longChain(t, tree)
	must(t, os.Chmod(tree, 0o500))
	file := filepath.Join(base, "file")
	must(t, os.WriteFile(file, nil, 0o400))
	for _, p := range []string{tree, file, filepath.Join(base, "missing")} {
		budget := 1 << 20
		if err := RemoveTree(p, &budget); err != nil {
			t.Fatalf("RemoveTree %s: %v", filepath.Base(p), err)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("%s stays", filepath.Base(p))
		}
	}
}
