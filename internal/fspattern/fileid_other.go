//go:build !unix

package fspattern

import "os"

// fileKey names one inode: its device and number.
type fileKey struct{ dev, ino uint64 }

// linkInfo says nothing on this platform (os.FileInfo carries no link
// count), so no hard links are looked for.
func linkInfo(os.FileInfo) (fileKey, uint64, bool) { return fileKey{}, 0, false }

// LinkCount says nothing on this platform: ok is false.
func LinkCount(os.FileInfo) (n uint64, ok bool) { return 0, false }
