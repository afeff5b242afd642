package statedir

import (
	"os"
	"path/filepath"
)

// RemoveAll removes dir like os.RemoveAll, but if that is refused it first
// makes every directory beneath dir writable by its owner, so that a
// read-only directory the sandbox left behind (module caches do that)
// cannot keep the working directory alive. Symbolic links are not followed.
func RemoveAll(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil || !os.IsPermission(err) {
		return err
	}
	makeWritable(dir)
	return os.RemoveAll(dir)
}

func makeWritable(dir string) {
	if err := os.Chmod(dir, 0o700); err != nil {
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() { // DirEntry.IsDir is false for a symlink to a directory
			makeWritable(filepath.Join(dir, e.Name()))
		}
	}
}
