package lookpath

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HasPathSeparator reports whether a command name is a path rather than a
// name to look up in PATH: it holds a slash, a backslash or a drive.
func HasPathSeparator(name string) bool {
	return strings.ContainsAny(name, `/\`) || filepath.VolumeName(name) != ""
}

// pathExt are the extensions that make a file executable (PATHEXT).
func pathExt() []string {
	v := os.Getenv("PATHEXT")
	if v == "" {
		v = ".COM;.EXE;.BAT;.CMD"
	}
	var out []string
	for _, e := range strings.Split(v, ";") {
		if strings.HasPrefix(e, ".") {
			out = append(out, strings.ToLower(e))
		}
	}
	return out
}

// ExecutableMode reports whether the file at path is executable: Windows
// has no mode bit for it, so by its extension.
func ExecutableMode(path string, _ fs.FileInfo) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range pathExt() {
		if ext == e {
			return true
		}
	}
	return false
}

// execCandidates are the files a PATH entry joined with a name may be:
// the name itself when it has an executable extension, else the name
// with each extension of PATHEXT.
func execCandidates(p string) []string {
	if ExecutableMode(p, nil) {
		return []string{p}
	}
	var out []string
	for _, e := range pathExt() {
		out = append(out, p+e)
	}
	return out
}
