package pysandbox

import (
	"os/exec"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostinput"
)

// maxToolBytes bounds what is hashed of a host tool (an interpreter, uv)
// that lies where a sandbox could write, to compare it with a pin.
const maxToolBytes = 1 << 30

// ToolOptions are the checks of a program the host runs to make a venv:
// refused, unless the user pinned it (moat trust), when it lies in a place
// a sandbox of an earlier run could write, is reached through a link
// there, is hard-linked, or another user may write it. stateRoot is moat's
// state root, which holds the pins.
func ToolOptions(stateRoot, subject string) hostinput.Options {
	return hostinput.Options{Subject: subject, Max: maxToolBytes, Store: hostinput.Store{Dir: stateRoot}}
}

// checkHostTool checks the program at path (see ToolOptions).
func checkHostTool(stateRoot, path, subject string) error {
	_, err := hostinput.Check(path, ToolOptions(stateRoot, subject))
	return err
}

// LookPath returns the venv build's PATH search: it finds name (python3,
// uv) on the host's PATH, as the venv build runs it on the host, and
// refuses what a sandbox could have put there: a PATH entry in a place an
// earlier run could write (a working directory's bin/ that did not exist
// when the user put it on PATH, a writable grant) would otherwise have the
// host run the sandbox's program.
func LookPath(stateRoot string) func(name string) (string, error) {
	return func(name string) (string, error) {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", err
		}
		if err := checkHostTool(stateRoot, p, name+" found on PATH"); err != nil {
			return "", err
		}
		return p, nil
	}
}

// CheckInterpreter checks the interpreter a venv names by path, which
// internal/venv runs on the host without a PATH search. A name without a
// slash passes: LookPath checks it.
func CheckInterpreter(stateRoot, python string) error {
	if !strings.Contains(python, "/") {
		return nil
	}
	return checkHostTool(stateRoot, python, "python interpreter")
}
