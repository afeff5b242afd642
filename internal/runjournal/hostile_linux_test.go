package runjournal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat/internal/fileid"
)

// TestQuarantineCopyLockedTree: a control directory that Close copies to
// the quarantine across file systems, left by the sandbox 0500 with a
// 0500 directory inside, is copied and its original removed from the
// place. Controls: the place and the state directory lie on different
// file systems (the copy path is taken), and a plain os.RemoveAll of the
// same tree fails (as an unprivileged user: root ignores the modes).
func TestQuarantineCopyLockedTree(t *testing.T) {
	place, err := os.MkdirTemp("/dev/shm", "moat-ql-")
	if err != nil {
		t.Fatalf("control: no tmpfs to put a place on: %v", err)
	}
	t.Cleanup(func() {
		filepath.Walk(place, func(p string, _ os.FileInfo, _ error) error { _ = os.Chmod(p, 0o700); return nil })
		os.RemoveAll(place)
	})
	root := t.TempDir()
	if pd, _, _ := fileid.Identity(place); func() bool { rd, _, _ := fileid.Identity(root); return pd == rd }() {
		t.Fatalf("control: %s and %s are on one file system", place, root)
	}
	plant := func(d string) {
		t.Helper()
		for _, step := range []func() error{
			func() error { return os.MkdirAll(filepath.Join(d, "ro"), 0o700) },
			func() error { return os.WriteFile(filepath.Join(d, "ro", "g"), []byte("y"), 0o600) },
			func() error { return os.Chmod(filepath.Join(d, "ro"), 0o500) },
			func() error { return os.Chmod(d, 0o500) },
		} {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if os.Geteuid() != 0 {
		c := filepath.Join(place, "control")
		plant(c)
		if err := os.RemoveAll(c); err == nil {
			t.Fatal("control: os.RemoveAll removed the locked tree, so the case shows nothing")
		}
	} else {
		t.Log("LOUD: running as root, which ignores directory modes: the os.RemoveAll control is not tried; run as an unprivileged user")
	}
	d := filepath.Join(place, ".vscode")
	plant(d)
	dest, err := quarantine(root, "0123456789ab", place, d, ".vscode", newCopyBudget())
	if err != nil {
		t.Fatalf("quarantine: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "ro", "g")); err != nil || string(b) != "y" {
		t.Fatalf("the copy: %q, %v", b, err)
	}
	if _, err := os.Lstat(d); err == nil {
		t.Fatal("the original stays in the place")
	}
}
