// Package paths holds the few path predicates that moat's host-side
// packages share, so that "lies under" means one thing everywhere.
package paths

import (
	"os"
	"strings"
)

// Under (under_unix.go, under_windows.go) reports whether p is dir or
// lies beneath it. Both are absolute and clean.

// UnderAny reports whether p is one of roots or lies beneath one.
func UnderAny(p string, roots []string) bool {
	for _, r := range roots {
		if Under(p, strings.TrimSuffix(r, "/")) {
			return true
		}
	}
	return false
}

// Bare drops an *os.PathError's wrapper, whose path the caller already
// names, and keeps its cause.
func Bare(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
