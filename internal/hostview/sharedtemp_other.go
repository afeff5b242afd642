//go:build !linux

package hostview

import (
	"io/fs"
	"os"
)

// dirAt stats a directory's entries; elsewhere than Linux, through
// os.DirEntry.Info.
type dirAt struct{}

func openDir(string) dirAt { return dirAt{} }

func (dirAt) lstat(e os.DirEntry) (fs.FileMode, int64, bool) { return statEntry(e) }

func (dirAt) close() {}
