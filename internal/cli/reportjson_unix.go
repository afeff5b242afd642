//go:build unix

package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// writableDir reports why moat cannot create a file in dir, or nil.
func writableDir(dir string) error {
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return &os.PathError{Op: "write", Path: dir, Err: err}
	}
	return nil
}

// createExclusive creates a new file in dir whose name starts with
// prefix: O_EXCL and O_NOFOLLOW, so nothing already there, a link
// included, is opened; O_CLOEXEC, so no command inherits it; 0600.
func createExclusive(dir, prefix string) (*os.File, string, error) {
	for range 16 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, "", err
		}
		name := filepath.Join(dir, prefix+hex.EncodeToString(b[:])+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("cannot create a file of a new name in " + dir)
}

// syncDir flushes dir's entries, so a rename in it survives a crash; a
// failure only loses that.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
