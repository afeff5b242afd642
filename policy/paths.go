package policy

import (
	"errors"
	"path/filepath"
	"strings"
)

var errEmptyPath = errors.New("empty path")

// expand makes a path of the config file absolute: a leading ~/ (or a
// lone ~) is $HOME, and a relative path is relative to the file's
// directory. It does no I/O; the path need not exist yet.
func (c *checker) expand(p string) (string, error) {
	switch {
	case p == "":
		return "", errEmptyPath
	case strings.IndexByte(p, 0) >= 0:
		return "", errors.New("path contains a NUL byte")
	case p == "~" || strings.HasPrefix(p, "~/"):
		if c.home == "" || !filepath.IsAbs(c.home) {
			return "", errors.New("~ needs $HOME set to an absolute path")
		}
		return filepath.Join(c.home, p[1:]), nil
	case strings.HasPrefix(p, "~"):
		return "", errors.New("only ~/ is expanded; write ~user's home as an absolute path")
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	}
	return filepath.Join(c.dir, p), nil
}
