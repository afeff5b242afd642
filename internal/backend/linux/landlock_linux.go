package linux

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Landlock access rights grouped the way moat grants them.
const (
	fsRead     = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsReadExec = fsRead | unix.LANDLOCK_ACCESS_FS_EXECUTE
	// fsFileOnly is what a rule on a non-directory may carry.
	fsFileOnly = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	fsDevice = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS returns every filesystem right the given Landlock ABI knows.
func handledFS(abi int) uint64 {
	var a uint64 = unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1 // ABI 1: execute .. make_sym
	if abi >= 2 {
		a |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		a |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		a |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
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
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(s.LandlockABI)}
	if s.DenyConnect && s.LandlockABI >= 4 {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if s.Scope && s.LandlockABI >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, err := landlockCreateRuleset(&attr)
	if err != nil {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	rs := &ruleset{fd: fd, handled: attr.Handled_access_fs}
	add := func(paths []string, access uint64, mustExist bool) error {
		for _, p := range paths {
			var want *fileID
			if id, ok := s.Identity[p]; ok {
				want = &id
			}
			if err := rs.addPath(p, access, want); err != nil {
				if !mustExist && errors.Is(err, unix.ENOENT) {
					continue
				}
				return err
			}
		}
		return nil
	}
	all := attr.Handled_access_fs
	steps := []struct {
		paths     []string
		access    uint64
		mustExist bool
	}{
		{s.ReadExec, fsReadExec, false},
		{s.ReadOnly, fsRead, false},
		{s.DevFiles, fsDevice, false},
		{[]string{s.WorkDir}, all &^ unix.LANDLOCK_ACCESS_FS_EXECUTE, true},
		{s.ReadWrite, all &^ unix.LANDLOCK_ACCESS_FS_EXECUTE, true},
		{s.WriteExec, all, true},
	}
	for _, st := range steps {
		if err := add(st.paths, st.access, st.mustExist); err != nil {
			rs.close()
			return nil, err
		}
	}
	return rs, nil
}

// addFD adds a rule for the file open as fd, narrowed to file rights when it
// is not a directory.
func (rs *ruleset) addFD(fd int, access uint64) error {
	if rs.fd < 0 {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock rule for descriptor %d: %w", fd, err)
	}
	access &= rs.handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fsFileOnly
	}
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if err := landlockAddPathRule(rs.fd, &attr); err != nil {
		return fmt.Errorf("landlock rule for descriptor %d: %w", fd, err)
	}
	return nil
}

// addPath adds one path-beneath rule, narrowed to file rights when path is
// not a directory.
func (rs *ruleset) addPath(path string, access uint64, want *fileID) error {
	var fd int
	var err error
	if want != nil {
		// A grant: the rule must land on the object that was checked.
		fd, err = openVerified(path, want)
	} else {
		fd, err = unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return fmt.Errorf("landlock rule %q: %w", path, err)
	}
	defer unix.Close(fd)
	if err := rs.addFD(fd, access); err != nil {
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
	if err := landlockRestrictThread(rs.fd); err != nil {
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
