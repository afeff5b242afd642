package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// StateRootCandidate is one place moat's user state directory (run
// journals, the quarantine) may be made. Shared is set for a place in a
// directory other users may write (a per-user runtime directory is not
// one, /var/tmp is): there it must be a directory, not a link, made by
// this user, reached through no link, and nobody else may enter it. The
// zero value is no place.
type StateRootCandidate struct {
	Path   string
	Shared bool
}

// StateRootCandidates lists, in order, where moat's state root may live:
// $XDG_STATE_HOME/moat; ~/.local/state/moat for $HOME; the same for the
// home of the user's passwd entry (passwdHome, looked up only when asked:
// HOME unset, missing or unreadable, as for service users, cron and some
// CI); /run/user/UID/moat-state when /run/user/UID is this user's 0700
// directory (not made here); and last /var/tmp/moat-state-UID, checked
// strictly (Shared). Never the system temporary directory (/tmp,
// $TMPDIR): it is cleaned on its own schedule, and the sandboxes' own
// /tmp is a private one laid over it. Relative values are ignored.
func StateRootCandidates(xdgStateHome, home string, passwdHome func() string, uid int) []StateRootCandidate {
	var out []StateRootCandidate
	add := func(p string, shared bool) {
		for _, c := range out {
			if c.Path == p {
				return
			}
		}
		out = append(out, StateRootCandidate{Path: p, Shared: shared})
	}
	if filepath.IsAbs(xdgStateHome) {
		add(filepath.Join(filepath.Clean(xdgStateHome), "moat"), false)
	}
	if filepath.IsAbs(home) {
		add(filepath.Join(filepath.Clean(home), ".local", "state", "moat"), false)
	}
	if passwdHome != nil {
		if h := passwdHome(); filepath.IsAbs(h) {
			add(filepath.Join(filepath.Clean(h), ".local", "state", "moat"), false)
		}
	}
	run := filepath.Join("/run/user", strconv.Itoa(uid))
	if ownPrivateDir(run, uid) == nil {
		add(filepath.Join(run, "moat-state"), false)
	}
	add(filepath.Join("/var/tmp", "moat-state-"+strconv.Itoa(uid)), true)
	return out
}

// MakeSharedStateRoot makes (0700) or reuses the Shared candidate dir:
// one level made, never through a link, and used only when it is a
// directory of uid's that nobody else may enter and its path resolves to
// itself. Another user's directory there, or a link, is an error: the
// place is refused, never repaired.
func MakeSharedStateRoot(dir string, uid int) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := ownPrivateDir(dir, uid); err != nil {
		return err
	}
	if r, err := filepath.EvalSymlinks(dir); err != nil || r != dir {
		return fmt.Errorf("%s is reached through a symbolic link", dir)
	}
	return nil
}
