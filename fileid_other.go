//go:build !unix

package moat

import "os"

// fileIdentity cannot identify a file here: zero means unchecked.
func fileIdentity(path string) (dev, ino uint64, err error) {
	_, err = os.Lstat(path)
	return 0, 0, err
}

// identityOf cannot identify a file here: zero means unchecked.
func identityOf(os.FileInfo) (dev, ino uint64) { return 0, 0 }
