//go:build unix

package statedir

import (
	"io/fs"
	"syscall"
)

// FileOwner returns the uid that owns fi's file.
func FileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
