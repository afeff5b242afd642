// Package lookpath finds a command as a sandbox would: in the sandbox's
// PATH, absolute entries only, and checks that the file it finally names
// lies where the sandbox may execute, so that the caller can give a clear
// error instead of a bare EACCES from inside the sandbox.
package lookpath

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/paths"
)

// Error is a command that cannot be found or may not be executed in the
// sandbox. It matches exec.ErrNotFound or fs.ErrPermission. The zero
// value says nothing and matches neither.
type Error struct {
	// Msg says what is wrong, naming the command.
	Msg string
	// Kind is exec.ErrNotFound or fs.ErrPermission.
	Kind error
	// Refused is the resolved file that lies outside the executable
	// places, for the caller to record; "" for any other error.
	Refused string
}

// Error returns Msg.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// Resolve finds name as the sandbox would, with the sandbox's PATH
// pathEnv, relative to dir when it is a relative path, and checks that the
// file it finally names lies under one of execRoots. It returns the path
// found (not resolved), or an *Error.
func Resolve(name, dir, pathEnv string, execRoots []string) (string, error) {
	if name == "" {
		return "", &Error{Msg: "empty command", Kind: exec.ErrNotFound}
	}
	path := name
	if !HasPathSeparator(name) { // lookpath_unix.go, lookpath_windows.go
		found, err := Find(name, pathEnv)
		if err != nil {
			return "", &Error{Msg: name + ": command not found in the sandbox's PATH", Kind: exec.ErrNotFound}
		}
		path = found
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", &Error{Msg: name + ": no such file", Kind: exec.ErrNotFound}
	}
	fi, err := os.Stat(real)
	if err != nil || fi.IsDir() || !ExecutableMode(real, fi) {
		return "", &Error{Msg: name + ": not an executable file", Kind: fs.ErrPermission}
	}
	if !paths.UnderAny(real, execRoots) {
		return "", &Error{
			Msg:     name + ": " + real + " is not in an executable location of the sandbox (grant it with --executable, Grant EXEC; or --build, Config.Build, for files built in the working directory)",
			Kind:    fs.ErrPermission,
			Refused: real,
		}
	}
	return path, nil
}

// Find searches pathEnv for an executable regular file called name.
func Find(name, pathEnv string) (string, error) {
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // relative PATH entries are a classic trap; ignore them
		}
		for _, p := range execCandidates(filepath.Join(dir, name)) {
			fi, err := os.Stat(p)
			if err == nil && fi.Mode().IsRegular() && ExecutableMode(p, fi) {
				return p, nil
			}
		}
	}
	return "", exec.ErrNotFound
}
