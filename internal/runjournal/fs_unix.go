//go:build unix

package runjournal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// privateDir checks that d is a directory (not a link) of this user's
// that nobody else may enter.
func privateDir(d string) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
		return fmt.Errorf("%s is not a private directory of this user's", d)
	}
	return nil
}

// ownedByMe reports whether this user owns fi's file.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// isCrossDevice reports whether err is a rename across file systems.
func isCrossDevice(err error) bool { return errors.Is(err, syscall.EXDEV) }
