package runjournal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/statedir"
)

// stateRootOverride replaces the state directory in tests.
var stateRootOverride string

// StateRoot is the user's moat state directory: the first usable of
// statedir.StateRootCandidates ($XDG_STATE_HOME/moat,
// ~/.local/state/moat for $HOME and then for the passwd entry's home,
// /run/user/UID/moat-state, /var/tmp/moat-state-UID), made 0700, and
// used only when it is a directory of this user's that nobody else may
// enter. It never falls back into the system temporary directory; with
// no usable place it is an error that says how to name one (without the
// "moat:" prefix).
func StateRoot() (string, error) {
	key := stateRootOverride + "\x00" + os.Getenv("XDG_STATE_HOME") + "\x00" + os.Getenv("HOME")
	stateRootCache.Lock()
	defer stateRootCache.Unlock()
	if stateRootCache.key == key && privateDir(stateRootCache.root) == nil {
		return stateRootCache.root, nil
	}
	root, err := findStateRoot()
	if err == nil {
		stateRootCache.key, stateRootCache.root = key, root
	}
	return root, err
}

// stateRootCache is the state directory last found, for the environment
// it was found in.
var stateRootCache struct {
	sync.Mutex
	key, root string
}

func findStateRoot() (string, error) {
	var cands []statedir.StateRootCandidate
	if stateRootOverride != "" {
		cands = []statedir.StateRootCandidate{{Path: stateRootOverride}}
	} else {
		cands = statedir.StateRootCandidates(os.Getenv("XDG_STATE_HOME"), os.Getenv("HOME"), PasswdHome, os.Geteuid())
	}
	var tried []string
	for _, c := range cands {
		r, err := useStateRoot(c)
		if err == nil {
			return r, nil
		}
		tried = append(tried, paths.Bare(err).Error())
	}
	return "", fmt.Errorf("state directory: no private place for moat's state (run journals, quarantine); set XDG_STATE_HOME to a directory of yours (tried: %s)", strings.Join(tried, "; "))
}

// useStateRoot makes candidate c and returns its resolved path when it is
// a private directory of this user's.
func useStateRoot(c statedir.StateRootCandidate) (string, error) {
	if c.Shared {
		if err := statedir.MakeSharedStateRoot(c.Path, os.Geteuid()); err != nil {
			return "", err
		}
		return c.Path, nil
	}
	if err := os.MkdirAll(c.Path, 0o700); err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(c.Path)
	if err != nil {
		return "", err
	}
	if err := privateDir(r); err != nil {
		return "", err
	}
	return r, nil
}

// legacyStateRoot is where an earlier moat fell back to with no usable
// HOME: moat-state-UID in the system temporary directory. Only its
// journals are still swept (when it is a private directory of this
// user's); nothing new is written there.
func legacyStateRoot() string {
	if stateRootOverride != "" {
		return stateRootOverride
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("moat-state-%d", os.Geteuid()))
}

// PasswdHome is the home directory of this user's passwd entry, or "".
func PasswdHome() string {
	u, err := user.LookupId(strconv.Itoa(os.Geteuid()))
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// stateSub makes (0700) and returns the directory name under the state
// root.
func stateSub(root, name string) (string, error) {
	d := filepath.Join(root, name)
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if err := privateDir(d); err != nil {
		return "", err
	}
	return d, nil
}
