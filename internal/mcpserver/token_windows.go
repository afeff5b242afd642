package mcpserver

import (
	"errors"
	"os"
)

const noFollow = 0

// privateDir checks dir is a real directory; Windows keeps it private by
// the ACL of the user's profile it lies in.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a directory (a link?)")
	}
	return nil
}

// processAlive is true on Windows: token files are not swept there.
func processAlive(int) bool { return true }
