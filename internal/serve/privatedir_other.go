//go:build !unix

package serve

import (
	"errors"
	"os"
)

// checkPrivateDir refuses a link or a non-directory; ownership is not
// checked here, and the token is required on every connection.
func checkPrivateDir(dir string, strict bool) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return errors.New("is a symbolic link")
	}
	if !fi.IsDir() {
		return errors.New("is not a directory")
	}
	return nil
}

// oNoFollow: no such flag here; the directory check refused links.
const oNoFollow = 0
