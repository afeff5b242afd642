package fspattern

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// State is what the host has at a concrete path. The zero value is
// Missing.
type State uint8

const (
	// Missing means a component of the path does not exist.
	Missing State = iota
	// Existing means the final component exists, even as a dangling
	// symbolic link.
	Existing
)

// IndeterminateError is host state that cannot be told apart from a
// missing path: a component that cannot be read, or a symbolic link on the
// way that cannot be resolved. Policy is never weakened on such state.
// The zero value is not useful.
type IndeterminateError struct {
	// Path is the path asked about.
	Path string
	// Err is what got in the way.
	Err error
}

// Error returns the one-line message.
func (e *IndeterminateError) Error() string {
	return "filesystem path " + strconv.Quote(e.Path) + ": cannot tell whether it exists: " + e.Err.Error()
}

// Unwrap returns Err.
func (e *IndeterminateError) Unwrap() error { return e.Err }

// PathState classifies an absolute, clean path by walking its components
// without following the final one: the final component existing, even as
// a dangling symbolic link, is Existing; a component that does not exist
// is Missing; a symbolic link before the final component is resolved first,
// and failing to resolve it, or any error other than "does not exist"
// (permission denied, say), is an *IndeterminateError.
func PathState(p string) (State, error) {
	if !filepath.IsAbs(p) {
		return Missing, &IndeterminateError{Path: p, Err: errors.New("not absolute")}
	}
	p = filepath.Clean(p)
	if p == "/" {
		return Existing, nil
	}
	parts := strings.Split(p[1:], "/")
	cur := "/"
	for i, c := range parts {
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, os.ErrNotExist) {
			return Missing, nil
		}
		if err != nil {
			return Missing, &IndeterminateError{Path: p, Err: bareErr(err)}
		}
		if i == len(parts)-1 {
			return Existing, nil
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(next)
			if err != nil {
				return Missing, &IndeterminateError{Path: p, Err: bareErr(err)}
			}
			next = real
		} else if !fi.IsDir() {
			return Missing, nil // ENOTDIR: nothing can be below a file
		}
		cur = next
	}
	return Existing, nil
}
