//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"testing"
)

// quietFS gives a disk-limit test a working directory and a TMPDIR (where
// moat puts the private temp and home it measures) on a file system no
// other suite writes, when test.sh, as root, has mounted one
// (MOAT_ESCAPE_QUIET_FS, a tmpfs the test user owns). The disk watch
// measures free space, and a concurrent suite that deletes a tree frees
// more than the test writes. Without it the test measures the shared
// file system, and its retries absorb the noise. tmp is set in the
// environment of the test process too, for the library's sandboxes.
func quietFS(t *testing.T) (work string, env []string) {
	t.Helper()
	root := os.Getenv("MOAT_ESCAPE_QUIET_FS")
	if root == "" {
		t.Log("no quiet file system (MOAT_ESCAPE_QUIET_FS, which test.sh run as root mounts): measuring the shared one")
		return t.TempDir(), nil
	}
	dir, err := os.MkdirTemp(root, "case")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	work, tmp := filepath.Join(dir, "work"), filepath.Join(dir, "tmp")
	for _, d := range []string{work, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	return work, []string{"TMPDIR=" + tmp}
}
