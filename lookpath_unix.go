//go:build !windows

package moat

import (
	"io/fs"
	"strings"
)

// hasPathSeparator reports whether a command name is a path rather than a
// name to look up in PATH.
func hasPathSeparator(name string) bool { return strings.Contains(name, "/") }

// executableMode reports whether fi, the file at path, is executable by
// its mode.
func executableMode(_ string, fi fs.FileInfo) bool { return fi.Mode()&0o111 != 0 }

// execCandidates are the files a PATH entry joined with a name may be.
func execCandidates(p string) []string { return []string{p} }
