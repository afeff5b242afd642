//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// openForWriting reports whether f's open file description allows writes
// (O_WRONLY or O_RDWR: a pipe's write end, a file opened with <>, a FIFO
// opened read-write); when its flags cannot be read it says true, so the
// caller replaces it.
func openForWriting(f *os.File) bool {
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		return true
	}
	return fl&unix.O_ACCMODE != unix.O_RDONLY
}
