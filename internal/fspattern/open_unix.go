//go:build unix

package fspattern

import (
	"os"
	"syscall"
)

// openFragment opens a fragment file for reading without following a
// symbolic link in its last component and without blocking on a FIFO.
func openFragment(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}
