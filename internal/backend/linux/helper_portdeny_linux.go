package linux

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// buildPortDeny creates the Landlock ruleset that denies TCP connect to
// s.DenyTCPPorts and allows every other port: Landlock has no deny rule
// and no port range, so it is one rule for each of the other 65,534 or
// so ports. The zygote builds it once and enforces it on each command's
// thread as a layer of its own, after the filesystem ruleset (which may
// be rebuilt for a command, see forkCommand): the layers intersect, and
// this one handles TCP connect only. nil when no port is denied.
func buildPortDeny(s *helperSpec) (*ruleset, error) {
	if len(s.DenyTCPPorts) == 0 {
		return nil, nil
	}
	if s.LandlockABI < 4 {
		return nil, fmt.Errorf("deny TCP connect to %s: needs Landlock ABI 4, the kernel has %d", portList(s.DenyTCPPorts), s.LandlockABI)
	}
	var denied [1 << 16]bool
	for _, p := range s.DenyTCPPorts {
		denied[p] = true
	}
	attr := unix.LandlockRulesetAttr{Handled_access_net: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP}
	fd, err := landlockCreateRuleset(&attr)
	if err != nil {
		return nil, fmt.Errorf("landlock_create_ruleset for the denied TCP ports: %w", err)
	}
	rs := &ruleset{fd: fd}
	for port := range len(denied) {
		if denied[port] {
			continue
		}
		pa := landlockNetPortAttr{AllowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, Port: uint64(port)}
		if err := landlockAddPortRule(fd, &pa); err != nil {
			rs.close()
			return nil, fmt.Errorf("landlock rule for TCP port %d: %w", port, err)
		}
	}
	return rs, nil
}
