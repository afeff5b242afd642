//go:build !linux

package hostview

import "os"

// exactNames reports false: the file systems of macOS and Windows usually
// match names without regard to case, so a name a listing lacks may still
// be there for lstat, which answers every lookup instead.
func exactNames(*os.File) bool { return false }
