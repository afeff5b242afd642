package linux

import (
	"sync"

	"golang.org/x/sys/unix"
)

// clone3Works reports whether this process may call clone3, which Go needs
// to start a child straight into a cgroup (SysProcAttr.UseCgroupFD). A
// seccomp profile that answers clone3 with ENOSYS (Docker's default does,
// so that glibc falls back to clone) would otherwise fail every start;
// without it the zygote is moved into the cgroup right after it starts
// (cgroup.Add), as on cgroup v1.
var clone3Works = sync.OnceValue(func() bool {
	// A zero-sized argument is refused with EINVAL by every kernel that
	// has clone3, before it does anything.
	_, _, errno := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
	return errno != unix.ENOSYS
})
