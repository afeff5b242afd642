package policy

import (
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/hostinput"
)

// maxHostProgramBytes bounds what is hashed of a host program that lies
// where a sandbox could write, to compare it with a pin.
const maxHostProgramBytes = 1 << 30

// checkHostProgram refuses a program that moat is about to run on the
// host when a sandbox of an earlier run could have written it (it lies in
// a recorded writable place, is reached through a link there, is
// hard-linked, or another user may write it), unless "moat trust" pinned
// its content.
func checkHostProgram(path, subject string) error {
	root, err := moat.StateDir()
	if err != nil {
		return err
	}
	_, err = hostinput.Check(path, hostinput.Options{Subject: subject, Max: maxHostProgramBytes, Store: hostinput.Store{Dir: root}})
	return err
}

// gpgconfEnv is the environment gpgconf gets: what names the user's
// GnuPG directories and the locale, nothing that would make it load other
// code (LD_PRELOAD and the like).
func gpgconfEnv(environ []string) []string {
	keep := []string{"PATH=", "HOME=", "GNUPGHOME=", "XDG_RUNTIME_DIR=", "LANG=", "LC_ALL=", "LC_CTYPE=", "LC_MESSAGES="}
	var out []string
	for _, kv := range environ {
		for _, k := range keep {
			if strings.HasPrefix(kv, k) {
				out = append(out, kv)
				break
			}
		}
	}
	return out
}
