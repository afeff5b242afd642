package ipc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// errNoCallerDir is why Call.DirFile is nil where the host cannot open a
// directory beneath the caller's root.
var errNoCallerDir = errors.New("the caller's directory cannot be opened beneath its root on this system")

// checkCallerDir checks dir, the caller's working directory as it said it:
// absolute and clean, so that nothing in it climbs or is implied.
func checkCallerDir(dir string) (string, error) {
	if !strings.HasPrefix(dir, "/") || filepath.Clean(dir) != dir || strings.ContainsRune(dir, 0) {
		return "", errors.New("not an absolute, clean path")
	}
	rel := strings.TrimPrefix(dir, "/")
	if rel == "" {
		rel = "."
	}
	return rel, nil
}

// callerDirOpener opens a caller's directory for one connection; nil
// opens none.
type callerDirOpener interface {
	openDir(dir string) (*os.File, error)
	close()
}
