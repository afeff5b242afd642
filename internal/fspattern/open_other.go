//go:build !unix

package fspattern

import "os"

// openFragment opens a fragment file for reading. Without O_NOFOLLOW the
// caller's Lstat and its check of the opened file stand in for it.
func openFragment(p string) (*os.File, error) {
	return os.Open(p)
}
