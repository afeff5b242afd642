package moat

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/paths"
)

var errPermission = fs.ErrPermission

// commandError is a command that cannot be found or may not be executed in
// the sandbox. It matches exec.ErrNotFound or fs.ErrPermission.
type commandError struct {
	msg   string
	kind  error // exec.ErrNotFound, fs.ErrPermission, or nil
	cause error // the platform's own error, if any
}

func (e *commandError) Error() string { return e.msg }
func (e *commandError) Unwrap() error { return e.kind }

// resolveDir returns the command's working directory: the sandbox's working
// directory, or dir relative to it.
func (s *Sandbox) resolveDir(dir string) string {
	if dir == "" {
		return s.workDir
	}
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(s.workDir, dir)
}

// resolveExecutable finds name as the sandbox would, with the sandbox's
// PATH, and checks that the file it finally names lies where the sandbox may
// execute. Failing here gives a clear error instead of a bare EACCES from
// inside the sandbox.
func (s *Sandbox) resolveExecutable(name, dir string, env []string) (string, error) {
	if name == "" {
		return "", &commandError{msg: "empty command", kind: exec.ErrNotFound}
	}
	path := name
	if !hasPathSeparator(name) { // lookpath_unix.go, lookpath_windows.go
		found, err := lookPath(name, lookupEnv(env, "PATH"))
		if err != nil {
			return "", &commandError{msg: name + ": command not found in the sandbox's PATH", kind: exec.ErrNotFound}
		}
		path = found
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", &commandError{msg: name + ": no such file", kind: exec.ErrNotFound}
	}
	fi, err := os.Stat(real)
	if err != nil || fi.IsDir() || !executableMode(real, fi) {
		return "", &commandError{msg: name + ": not an executable file", kind: errPermission}
	}
	if !paths.UnderAny(real, s.backend.ExecRoots()) {
		s.noteExecRefused(real)
		return "", &commandError{
			msg:  name + ": " + real + " is not in an executable location of the sandbox (grant it with --executable, Grant EXEC; or --build, Config.Build, for files built in the working directory)",
			kind: errPermission,
		}
	}
	return path, nil
}

// lookPath searches pathEnv for an executable regular file called name.
func lookPath(name, pathEnv string) (string, error) {
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // relative PATH entries are a classic trap; ignore them
		}
		for _, p := range execCandidates(filepath.Join(dir, name)) {
			fi, err := os.Stat(p)
			if err == nil && fi.Mode().IsRegular() && executableMode(p, fi) {
				return p, nil
			}
		}
	}
	return "", exec.ErrNotFound
}
