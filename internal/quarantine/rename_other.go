//go:build !linux

package quarantine

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// renameNoReplace renames src to dst, failing if dst exists (checked just
// before: not atomic where there is no RENAME_NOREPLACE).
func renameNoReplace(src, dst string) error {
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return fs.ErrExist
	}
	return os.Rename(src, dst)
}

func isCrossDevice(err error) bool { return errors.Is(err, syscall.EXDEV) }
