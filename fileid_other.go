//go:build !unix

package moat

import "os"

// fileIdentity cannot identify a file here: zero means unchecked.
func fileIdentity(path string) (dev, ino uint64, err error) {
	_, err = os.Lstat(path)
	return 0, 0, err
}
