package hostiletree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Retire moves the tree at path into the directory trash (made 0700 when
// missing), under name followed by a random suffix, in one rename: from
// then on nothing looking for path finds it half removed, and
// [EmptyTrash] removes it, now or on a later call. trash must be on
// path's file system. A missing path is retired already.
func Retire(path, trash, name string) error {
	if err := os.Mkdir(trash, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("trash: %w", err)
	}
	dst := filepath.Join(trash, name+"-"+RandomHex())
	err := os.Rename(path, dst)
	if errors.Is(err, os.ErrPermission) && MakeOwnersDir(path) == nil {
		// Moving a directory to another parent rewrites its "..":
		// the directory itself must be writable.
		err = os.Rename(path, dst)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveTree removes the tree at path, which needs no trash: a file or
// link is unlinked, a directory made its owner's and emptied as a trash
// of its own (a directory too deep is moved up into it), within *budget
// entries, then removed. It returns [ErrBudget] when the budget ran out
// first, leaving path partly emptied. A missing path is removed already.
func RemoveTree(path string, budget *int) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		_ = MakeOwnersDir(path)
		if err := EmptyTrash(path, budget); err != nil {
			return err
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
