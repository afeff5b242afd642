package paths

import (
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/aclplan"
)

// Under reports whether p is dir or lies beneath it, as NTFS compares
// names: without regard to case, with backslashes (filepath.Clean turns
// slashes into them). Both are absolute and clean.
func Under(p, dir string) bool {
	return aclplan.Under(filepath.Clean(p), filepath.Clean(dir))
}
