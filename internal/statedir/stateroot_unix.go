//go:build unix

package statedir

import (
	"fmt"
	"os"
	"syscall"
)

// ownPrivateDir checks that dir is a directory, not a link, owned by uid,
// that nobody else may enter.
func ownPrivateDir(dir string, uid int) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != uid || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is not a private directory of this user's", dir)
	}
	return nil
}
