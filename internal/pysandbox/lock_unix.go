//go:build unix

package pysandbox

import (
	"fmt"
	"os"
	"syscall"
)

// Lock takes an exclusive lock on the file path (created 0600), so that
// two processes building the same cached venv take turns, and the second
// reuses what the first built. unlock releases it.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("venv cache lock %q: %v", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("venv cache lock %q: %v", path, err)
	}
	return func() { f.Close() }, nil
}
