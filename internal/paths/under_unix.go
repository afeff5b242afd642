//go:build !windows

package paths

import "strings"

// Under reports whether p is dir or lies beneath it. Both are absolute
// and clean. It does not allocate: the protected lists it is asked about
// have hundreds of entries.
func Under(p, dir string) bool {
	switch {
	case dir == "/":
		return strings.HasPrefix(p, "/")
	case len(p) == len(dir):
		return p == dir
	}
	return len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}
