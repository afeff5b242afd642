//go:build windows

package cli

import (
	"os"
)

// writableDir is nil: Windows' access checks are left to the write.
func writableDir(string) error { return nil }

// createExclusive creates a new file in dir whose name starts with
// prefix, exclusively (O_EXCL opens nothing already there).
func createExclusive(dir, prefix string) (*os.File, string, error) {
	f, err := os.CreateTemp(dir, prefix+"*.tmp")
	if err != nil {
		return nil, "", err
	}
	return f, f.Name(), nil
}

// syncDir does nothing: Windows has no directory sync.
func syncDir(string) {}
