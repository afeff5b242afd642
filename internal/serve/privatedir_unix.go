//go:build unix

package serve

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// checkPrivateDir refuses a directory that is a link, is not ours, or
// that others may write (or, when strict, reach at all).
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
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("is not owned by uid %d", os.Getuid())
	}
	perm := fi.Mode().Perm()
	if strict && perm&0o077 != 0 {
		return fmt.Errorf("mode %04o lets the group or others in; want 0700", perm)
	}
	if perm&0o022 != 0 {
		return fmt.Errorf("mode %04o lets the group or others write", perm)
	}
	return nil
}

// oNoFollow refuses to open a final link.
const oNoFollow = syscall.O_NOFOLLOW
