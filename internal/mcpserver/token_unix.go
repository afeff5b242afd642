//go:build !windows

package mcpserver

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

const noFollow = syscall.O_NOFOLLOW

// privateDir checks dir is a real directory of this user's, mode 0700.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a directory (a link?)")
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return errors.New("not owned by this user")
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("mode %04o lets others in; it must be 0700", fi.Mode().Perm())
	}
	return nil
}

// processAlive reports whether a process pid exists (signal 0 reaches it
// or it belongs to someone else).
func processAlive(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
