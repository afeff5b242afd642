//go:build !unix

package statedir

import "io/fs"

// FileOwner cannot tell a file's owner here.
func FileOwner(fs.FileInfo) (int, bool) { return 0, false }
