//go:build !unix

package hostiletree

import (
	"errors"
	"os"
	"path/filepath"
)

// Measure is not implemented here: it measures 0, incomplete.
func Measure(string, int) (int64, bool) { return 0, false }

// EmptyTrash removes each top entry of trash with os.RemoveAll, spending
// one unit of *budget on each; see the Unix version.
func EmptyTrash(trash string, budget *int) error {
	ents, err := os.ReadDir(trash)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if *budget <= 0 {
			return ErrBudget
		}
		*budget--
		if err := os.RemoveAll(filepath.Join(trash, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// MakeOwnersDir makes the directory at path its owner's (0700).
func MakeOwnersDir(path string) error { return os.Chmod(path, 0o700) }
