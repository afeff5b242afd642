package moat

import (
	"os/exec"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostinput"
)

// maxToolBytes bounds what is hashed of a host tool (an interpreter, uv)
// that lies where a sandbox could write, to compare it with a pin.
const maxToolBytes = 1 << 30

// hostToolOptions are the checks of a program the host runs to make a
// venv: refused, unless the user pinned it (moat trust), when it lies in a
// place a sandbox of an earlier run could write, is reached through a link
// there, is hard-linked, or another user may write it.
func hostToolOptions(subject string) (hostinput.Options, error) {
	root, err := moatStateRoot() // controljournal.go
	if err != nil {
		return hostinput.Options{}, err
	}
	return hostinput.Options{Subject: subject, Max: maxToolBytes, Store: hostinput.Store{Dir: root}}, nil
}

// checkHostTool checks the program at path (see hostToolOptions).
func checkHostTool(path, subject string) error {
	o, err := hostToolOptions(subject)
	if err != nil {
		return err
	}
	_, err = hostinput.Check(path, o)
	return err
}

// hostLookPath finds name (python3, uv) on the host's PATH, as the venv
// build runs it on the host, and refuses what a sandbox could have put
// there: a PATH entry in a place an earlier run could write (a working
// directory's bin/ that did not exist when the user put it on PATH, a
// writable grant) would otherwise have the host run the sandbox's program.
func hostLookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	if err := checkHostTool(p, name+" found on PATH"); err != nil {
		return "", err
	}
	return p, nil
}

// checkVenvSpecTools checks the interpreter a VenvConfig names by path,
// which internal/venv runs on the host without a PATH search.
func checkVenvSpecTools(python string) error {
	if !strings.Contains(python, "/") {
		return nil
	}
	if err := checkHostTool(python, "python interpreter"); err != nil {
		return errorf("%w", err)
	}
	return nil
}
