package quarantine

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames src to dst, failing if dst exists (an atomic
// check: RENAME_NOREPLACE).
func renameNoReplace(src, dst string) error {
	return unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
}

func isCrossDevice(err error) bool { return errors.Is(err, unix.EXDEV) }
