//go:build !unix

package hostinput

import (
	"io/fs"
	"os"
)

// openNoFollow opens p for reading.
func openNoFollow(p string) (*os.File, error) { return os.Open(p) }

// fileID is a file's identity; none is known here.
type fileID struct{}

// idOf reports no identity.
func idOf(string) (fileID, bool) { return fileID{}, false }

// ownedByMe reports true: ownership is not told here.
func ownedByMe(fs.FileInfo) bool { return true }

// privateDir accepts d when it is a directory.
func privateDir(d string) error {
	_, err := os.Stat(d)
	return err
}

// othersMayWrite reports nothing: permissions are not told here.
func othersMayWrite(fs.FileInfo, string) string { return "" }

// othersMayWriteDir reports nothing.
func othersMayWriteDir(fs.FileInfo) string { return "" }

// mayWrite reports true: permissions are not told here, so every place
// counts.
func mayWrite(string) bool { return true }
