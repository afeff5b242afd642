//go:build !windows

package lookpath

import (
	"io/fs"
	"strings"
)

// HasPathSeparator reports whether a command name is a path rather than a
// name to look up in PATH.
func HasPathSeparator(name string) bool { return strings.Contains(name, "/") }

// ExecutableMode reports whether fi, the file at path, is executable by
// its mode.
func ExecutableMode(_ string, fi fs.FileInfo) bool { return fi.Mode()&0o111 != 0 }

// execCandidates are the files a PATH entry joined with a name may be.
func execCandidates(p string) []string { return []string{p} }
