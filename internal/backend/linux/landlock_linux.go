package linux

import (
	"errors"
	"fmt"
	"strconv"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Landlock access rights grouped the way moat grants them.
const (
	fsRead     = ll.AccessFSReadFile | ll.AccessFSReadDir
	fsReadExec = fsRead | ll.AccessFSExecute
	// fsFileOnly is what a rule on a non-directory may carry.
	fsFileOnly = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
		ll.AccessFSTruncate | ll.AccessFSIoctlDev
	fsDevice = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// handledFS returns every filesystem right the given Landlock ABI knows.
func handledFS(abi int) uint64 {
	var a uint64 = 1<<13 - 1 // ABI 1: execute .. make_sym
	if abi >= 2 {
		a |= ll.AccessFSRefer
	}
	if abi >= 3 {
		a |= ll.AccessFSTruncate
	}
	if abi >= 5 {
		a |= ll.AccessFSIoctlDev
	}
	return a
}

// ruleset is a Landlock ruleset under construction in the helper.
type ruleset struct {
	fd      int
	handled uint64
}

// buildRuleset creates the ruleset for s: a read+execute baseline of system
// paths, the working directory read+write without execute, the grants, and,
// without a network namespace, no TCP connect at all. With abi 0 (Landlock
// unavailable, best effort) it returns an inert ruleset.
func buildRuleset(s *helperSpec) (*ruleset, error) {
	if s.LandlockABI < 1 {
		return &ruleset{fd: -1}, nil
	}
	attr := ll.RulesetAttr{HandledAccessFS: handledFS(s.LandlockABI)}
	if s.DenyConnect && s.LandlockABI >= 4 {
		attr.HandledAccessNet = ll.AccessNetConnectTCP
	}
	if s.Scope && s.LandlockABI >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	rs := &ruleset{fd: fd, handled: attr.HandledAccessFS}
	add := func(paths []string, access uint64, mustExist bool) error {
		for _, p := range paths {
			if err := rs.addPath(p, access); err != nil {
				if !mustExist && errors.Is(err, unix.ENOENT) {
					continue
				}
				return err
			}
		}
		return nil
	}
	all := attr.HandledAccessFS
	steps := []struct {
		paths     []string
		access    uint64
		mustExist bool
	}{
		{s.ReadExec, fsReadExec, false},
		{s.ReadOnly, fsRead, false},
		{s.DevFiles, fsDevice, false},
		{[]string{s.WorkDir}, all &^ ll.AccessFSExecute, true},
		{s.ReadWrite, all &^ ll.AccessFSExecute, true},
		{s.WriteExec, all, true},
		{terminalFDs(), fsDevice, false},
	}
	for _, st := range steps {
		if err := add(st.paths, st.access, st.mustExist); err != nil {
			rs.close()
			return nil, err
		}
	}
	return rs, nil
}

// terminalFDs names the standard descriptors that are character devices
// (a terminal, /dev/null), so reopening /dev/stdout or /dev/tty-like paths
// to them keeps working.
func terminalFDs() []string {
	var out []string
	for fd := 0; fd <= 2; fd++ {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR {
			out = append(out, "/proc/self/fd/"+strconv.Itoa(fd))
		}
	}
	return out
}

// addPath adds one path-beneath rule, narrowed to file rights when path is
// not a directory.
func (rs *ruleset) addPath(path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("landlock rule %q: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock rule %q: %w", path, err)
	}
	access &= rs.handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fsFileOnly
	}
	if access == 0 {
		return nil
	}
	attr := ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: access}
	if err := ll.LandlockAddPathBeneathRule(rs.fd, &attr, 0); err != nil {
		return fmt.Errorf("landlock rule %q: %w", path, err)
	}
	return nil
}

// restrictThread enforces the ruleset on the calling thread only; the
// command forked from this thread inherits it.
func (rs *ruleset) restrictThread() error {
	if rs.fd < 0 {
		return nil
	}
	if err := ll.LandlockRestrictSelf(rs.fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

func (rs *ruleset) close() {
	if rs.fd >= 0 {
		unix.Close(rs.fd)
		rs.fd = -1
	}
}
