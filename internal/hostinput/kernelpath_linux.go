package hostinput

import (
	"os"
	"strconv"
)

// kernelPath returns the kernel's name for f's file, or "" when it gives
// none.
func kernelPath(f *os.File) string {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || len(p) == 0 || p[0] != '/' {
		return ""
	}
	return p
}
