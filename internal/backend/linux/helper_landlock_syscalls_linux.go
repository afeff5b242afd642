package linux

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Landlock system calls, made directly with x/sys on the calling thread.
// go-landlock's syscall package would do the same, but it imports libcap's
// psx, which is a cgo package when cgo is enabled: every program importing
// moat would then be dynamically linked, and every sandbox helper, which is
// that program re-executed, would start more slowly.

// rulesetAttrSize covers handled_access_fs, handled_access_net and scoped;
// older kernels accept the trailing fields as long as they are zero.
const rulesetAttrSize = 24

func landlockABI() (int, error) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0, e
	}
	return int(v), nil
}

func landlockCreateRuleset(attr *unix.LandlockRulesetAttr) (int, error) {
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(attr)), rulesetAttrSize, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func landlockAddPathRule(rulesetFD int, attr *unix.LandlockPathBeneathAttr) error {
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(attr)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// landlockRestrictThread enforces the ruleset on the calling thread only.
func landlockRestrictThread(rulesetFD int) error {
	_, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rulesetFD), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// landlockRuleNetPort is LANDLOCK_RULE_NET_PORT (ABI 4).
const landlockRuleNetPort = 2

// landlockNetPortAttr is struct landlock_net_port_attr, which x/sys lacks.
type landlockNetPortAttr struct {
	AllowedAccess uint64
	Port          uint64
}

func landlockAddPortRule(rulesetFD int, attr *landlockNetPortAttr) error {
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), landlockRuleNetPort,
		uintptr(unsafe.Pointer(attr)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
