//go:build !linux

package gitguard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// checkNoLinks refuses a link in any component of rel below place w.
func checkNoLinks(w, rel string) error {
	p := w
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, name)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a link", p)
		}
	}
	return nil
}

// renameNoFollow renames rel (inside place w) to newName in the same
// directory, refusing links on the way and an existing target.
func renameNoFollow(w, rel, newName string) error {
	if dir := filepath.Dir(rel); dir != "." {
		if err := checkNoLinks(w, dir); err != nil {
			return err
		}
	}
	from := filepath.Join(w, rel)
	to := filepath.Join(filepath.Dir(from), newName)
	if _, err := os.Lstat(to); err == nil {
		return os.ErrExist
	}
	return os.Rename(from, to)
}

// restoreFile creates p afresh with perm and content, failing if anything
// is there.
func restoreFile(w, p string, perm os.FileMode, content []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openNoFollow opens p for reading after checking it is no link.
func openNoFollow(p string) (*os.File, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return os.Open(p)
}

// changeTime is unknown here: callers then assume the worst.
func changeTime(os.FileInfo) (time.Time, bool) { return time.Time{}, false }

func isExist(err error) bool { return errors.Is(err, os.ErrExist) }

// restoreLink makes p a symbolic link to target again.
func restoreLink(w, p, target string) error { return os.Symlink(target, p) }

// makeReadable is not needed where no sandbox runs this scan.
func makeReadable(string) bool { return false }

// inodeKey is unknown here: every file is hashed on its own.
func inodeKey(os.FileInfo) (fileID, bool) { return fileID{}, false }

// openDirEntries opens dir to list it, after checking it is no link.
func openDirEntries(dir string) (*os.File, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	return os.Open(dir)
}

// statPrint reports false: without a change time that no process can set,
// an entry that could not be compared stays treated as changed.
func statPrint(os.FileInfo) (fingerprint, bool) { return fingerprint{}, false }
