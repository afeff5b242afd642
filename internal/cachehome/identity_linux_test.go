package cachehome

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// remakeSameInode removes the directory dir and makes it again until the
// file system hands back its inode number (ext4 does at once), and says
// whether it did.
func remakeSameInode(t *testing.T, dir string) bool {
	t.Helper()
	var st syscall.Stat_t
	must(t, syscall.Stat(dir, &st))
	for range 50 {
		must(t, os.Remove(dir))
		must(t, os.Mkdir(dir, 0o700))
		var now syscall.Stat_t
		must(t, syscall.Stat(dir, &now))
		if now.Ino == st.Ino && now.Dev == st.Dev {
			return true
		}
	}
	return false
}

// TestIdentifyRemadeDirectory: a directory removed and made again at the
// same path, with the same inode number, is another project, with
// another key. The control: the same directory identified twice is the
// same project.
func TestIdentifyRemadeDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "project")
	must(t, os.Mkdir(dir, 0o700))
	secret := make([]byte, 32)
	first, err := Identify(dir)
	must(t, err)
	again, err := Identify(dir)
	must(t, err)
	if again != first || Key(secret, again, "p") != Key(secret, first, "p") {
		t.Fatalf("control: one directory identified twice: %+v, %+v", first, again)
	}
	if !remakeSameInode(t, dir) {
		t.Skip("PRECONDITION ABSENT: this file system never reused the inode number in 50 tries; the attack needs it")
	}
	remade, err := Identify(dir)
	must(t, err)
	if remade.Ino != first.Ino {
		t.Fatalf("inode %d, want the reused %d", remade.Ino, first.Ino)
	}
	t.Logf("old %+v, re-made %+v", first, remade)
	if remade.Born == first.Born || Key(secret, remade, "p") == Key(secret, first, "p") {
		t.Fatalf("a re-made directory with the old inode number is the old project: %+v, %+v", first, remade)
	}
}

// TestIdentifyRefusesNonDirectory: a link or a file is no project.
func TestIdentifyRefusesNonDirectory(t *testing.T) {
	d := t.TempDir()
	must(t, os.Symlink(d, filepath.Join(d, "link")))
	must(t, os.WriteFile(filepath.Join(d, "file"), nil, 0o600))
	for _, p := range []string{filepath.Join(d, "link"), filepath.Join(d, "file")} {
		if _, err := Identify(p); err == nil {
			t.Errorf("Identify(%s): no error", p)
		}
	}
}
