//go:build !unix

package fileid

import "os"

// Identity cannot identify a file here: zero means unchecked.
func Identity(path string) (dev, ino uint64, err error) {
	_, err = os.Lstat(path)
	return 0, 0, err
}

// IdentityOf cannot identify a file here: zero means unchecked.
func IdentityOf(os.FileInfo) (dev, ino uint64) { return 0, 0 }
