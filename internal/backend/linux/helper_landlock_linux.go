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

// buildRuleset creates the ruleset for s with the planned rules and,
// without a network namespace, no TCP connect at all. With abi 0 (Landlock
// unavailable, best effort) it returns an inert ruleset.
func buildRuleset(s *helperSpec, rules []llRule) (*ruleset, error) {
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
	if attr.Handled_access_net != 0 && s.ProxyPort > 0 {
		// Without a network namespace the policy proxy listens on the
		// host's loopback: connecting to its port is the only TCP allowed.
		pa := landlockNetPortAttr{AllowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, Port: uint64(s.ProxyPort)}
		if err := landlockAddPortRule(fd, &pa); err != nil {
			rs.close()
			return nil, fmt.Errorf("landlock rule for the proxy port: %w", err)
		}
	}
	for _, r := range rules {
		if err := rs.addRule(r); err != nil {
			rs.close()
			return nil, err
		}
	}
	return rs, nil
}

// planRules lists the Landlock rules of s: a read+execute baseline of
// system paths, the working directory read+write without execute, the
// grants, the level's extra paths, all carved around the protected paths.
// The zygote plans once and installs the plan in every ruleset it builds.
func planRules(s *helperSpec, readDir readDirFunc) []llRule {
	all := handledFS(s.LandlockABI)
	var rules []llRule
	add := func(paths []string, access uint64, must bool) {
		for _, p := range paths {
			r := llRule{Path: p, Access: access, Must: must}
			if id, ok := s.Identity[p]; ok {
				id := id
				r.ID = &id
			}
			rules = append(rules, r)
		}
	}
	dirRead := uint64(fsDevice | unix.LANDLOCK_ACCESS_FS_READ_DIR)
	add(s.ReadExec, fsReadExec, false)
	add(s.ReadOnly, fsRead, false)
	add(s.DevFiles, dirRead, false)
	add(s.ListOnly, unix.LANDLOCK_ACCESS_FS_READ_DIR, false)
	add(virtualPaths(s), fsRead, false) // host_fspolicy_linux.go
	for _, p := range s.TempRead {
		if _, inside := privateSource(s, p); inside {
			// A read-only bind inside the private /tmp, whose rule
			// covers it: a rule per file would cost an open and a call
			// per shown file in every command's ruleset.
			continue
		}
		rules = append(rules, llRule{Path: p, Access: fsRead, NoFollow: true})
	}
	add([]string{s.WorkDir}, all&^unix.LANDLOCK_ACCESS_FS_EXECUTE, true)
	add(s.ReadWrite, all&^unix.LANDLOCK_ACCESS_FS_EXECUTE, true)
	add(s.WriteExec, all, true)
	if s.Permissive {
		// Everything, carved below: shared temp not executable, devices
		// and protected paths out.
		add([]string{"/"}, all, true)
	}
	return carve(rules, s.Carve, readDir)
}

// addRule installs one planned rule. A missing path is skipped unless the
// rule must exist.
func (rs *ruleset) addRule(r llRule) error {
	var fd int
	var err error
	switch {
	case r.ID != nil:
		// A grant: the rule must land on the object that was checked.
		fd, err = openVerified(r.Path, r.ID)
	case r.NoFollow:
		fd, err = unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	default:
		fd, err = unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		if !r.Must && errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("landlock rule %q: %w", r.Path, err)
	}
	defer unix.Close(fd)
	if r.NoFollow {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return nil // swapped for a link since it was listed
		}
	}
	if err := rs.addFD(fd, r.Access); err != nil {
		return fmt.Errorf("landlock rule %q: %w", r.Path, err)
	}
	return nil
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
