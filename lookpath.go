package moat

import (
	"errors"
	"io/fs"

	"github.com/moat-sandbox/moat/internal/lookpath"
)

var errPermission = fs.ErrPermission

// commandError is a command that cannot be found or may not be executed in
// the sandbox. It matches exec.ErrNotFound or fs.ErrPermission.
type commandError struct {
	msg   string
	kind  error // exec.ErrNotFound, fs.ErrPermission, or nil
	cause error // the platform's own error, if any
}

func (e *commandError) Error() string { return "moat: " + e.msg }
func (e *commandError) Unwrap() error { return e.kind }

// resolveExecutable finds name as the sandbox would, with the sandbox's
// PATH, and checks that the file it finally names lies where the sandbox may
// execute (internal/lookpath). Failing here gives a clear error instead of a
// bare EACCES from inside the sandbox.
func (c *Cmd) resolveExecutable(name, dir string, env []string) (string, error) {
	path, err := lookpath.Resolve(name, dir, lookupEnv(env, "PATH"), c.sb.backend.ExecRoots())
	var le *lookpath.Error
	if errors.As(err, &le) {
		if le.Refused != "" {
			c.sb.noteExecRefused(le.Refused)
		}
		return "", &commandError{msg: le.Msg, kind: le.Kind}
	}
	return path, err
}
