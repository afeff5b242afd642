//go:build !windows

package paths

import "strings"

// Under reports whether p is dir or lies beneath it. Both are absolute
// and clean.
func Under(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
