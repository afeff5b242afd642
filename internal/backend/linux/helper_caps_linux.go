package linux

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lastCap is the highest capability number any current kernel defines; the
// bounding-set loop stops at the first EINVAL anyway.
const lastCap = 63

// dropCapabilities clears every capability of the calling thread: the
// bounding set, the ambient set and the effective, permitted and inheritable
// sets. With no_new_privs set afterwards, none can come back at execve, so
// even root, or root of a user namespace, runs the command with none.
func dropCapabilities() error {
	for c := 0; c <= lastCap; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL {
				break
			}
			// EPERM: no CAP_SETPCAP. Without it there is nothing in the
			// bounding set that could be used anyway once the other sets
			// are empty and no_new_privs is set.
			if err != unix.EPERM {
				return fmt.Errorf("drop bounding capability %d: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	// Raw syscall on the calling thread: unix.Capset would be the same, but
	// this documents that only this thread changes.
	if _, _, e := unix.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	return nil
}
