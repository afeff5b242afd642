package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// unavailableError marks failures that mean this process cannot create
// cgroups at all. It matches ErrUnavailable and unwraps to the cause.
type unavailableError struct {
	subject string
	err     error
}

func (e *unavailableError) Error() string {
	return "cgroup: " + e.subject + ": unavailable: " + e.err.Error()
}
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }
func (e *unavailableError) Unwrap() error        { return e.err }

func unavailable(subject string, err error) error {
	return &unavailableError{subject: subject, err: cause(err)}
}

// cause strips *fs.PathError so messages name the path only once.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeFile writes data to an existing cgroupfs file in a single write.
func writeFile(file, data string) error {
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(data)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// setFile writes data to dir/name, with the package's error format.
func setFile(dir, name, data string) error {
	file := filepath.Join(dir, name)
	if err := writeFile(file, data); err != nil {
		return fmt.Errorf("cgroup: %s: cannot write %q: %w", file, data, cause(err))
	}
	return nil
}

// rmdirRetry removes one cgroup directory, retrying on EBUSY (tasks still
// exiting) for up to about a second. A directory already gone is success.
func rmdirRetry(dir string) error {
	deadline := time.Now().Add(time.Second)
	for {
		err := unix.Rmdir(dir)
		switch {
		case err == nil, errors.Is(err, unix.ENOENT):
			return nil
		case errors.Is(err, unix.EBUSY) && time.Now().Before(deadline):
			time.Sleep(10 * time.Millisecond)
		default:
			return fmt.Errorf("cgroup: %s: cannot remove: %w", dir, err)
		}
	}
}

// removeTree removes dir and any child groups below it, deepest first.
// Child groups can exist if a sandboxed root process made them.
func removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, removeTree(filepath.Join(dir, e.Name())))
		}
	}
	errs = append(errs, rmdirRetry(dir))
	return errors.Join(errs...)
}

// subdirs returns dir and every group below it.
func subdirs(dir string) []string {
	out := []string{dir}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, subdirs(filepath.Join(dir, e.Name()))...)
		}
	}
	return out
}
