//go:build unix

package workdircheck

import "syscall"

// canWrite reports whether the user may create files in dir.
func canWrite(dir string) error {
	const wOK, xOK = 0x2, 0x1
	return syscall.Access(dir, wOK|xOK)
}
