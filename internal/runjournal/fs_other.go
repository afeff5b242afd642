//go:build !unix

package runjournal

import (
	"fmt"
	"io/fs"
	"os"
)

// privateDir checks that d is a directory, not a link; ownership is the
// operating system's ACLs' business here.
func privateDir(d string) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", d)
	}
	return nil
}

// ownedByMe cannot be told here; every file counts as this user's.
func ownedByMe(fs.FileInfo) bool { return true }

// isCrossDevice: a rename that fails is not retried as a copy here.
func isCrossDevice(error) bool { return false }
