//go:build !unix

package statedir

import (
	"fmt"
	"os"
)

// ownPrivateDir checks that dir is a directory, not a link; ownership is
// not told here.
func ownPrivateDir(dir string, _ int) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}
