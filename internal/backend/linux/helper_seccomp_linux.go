package linux

import (
	"fmt"
	"unsafe"

	"github.com/moat-sandbox/moat/internal/seccomp"
	"golang.org/x/sys/unix"
)

// buildSeccomp assembles moat's filter for this architecture; supervise
// hands the socket calls that name an address to the socket guard, and
// the execs and refused sockets to its observer (helper_observe_linux.go).
func buildSeccomp(allowInetTCP, supervise bool) ([]unix.SockFilter, error) {
	arch, ok := seccomp.NativeArch()
	if !ok {
		return nil, fmt.Errorf("seccomp: no filter for this architecture")
	}
	return seccomp.Assemble(arch, seccomp.Options{
		AllowInetStream:      allowInetTCP,
		SuperviseSockets:     supervise,
		SuperviseExec:        supervise,
		NotifyRefusedSockets: supervise,
	})
}

// installFilter loads the filter on the calling thread; no_new_privs must
// be set.
func installFilter(f []unix.SockFilter) error { return seccomp.Install(f) }

// installFilterListener loads the filter on the calling thread and returns
// the listener on which the socket guard receives its calls.
func installFilterListener(f []unix.SockFilter) (int, error) { return seccomp.InstallListener(f) }

// passExec returns filter preceded by a pass for the one execve whose
// pathname is the pointer path (seccomp.PassExec).
func passExec(f []unix.SockFilter, path *byte) ([]unix.SockFilter, error) {
	arch, ok := seccomp.NativeArch()
	if !ok {
		return nil, fmt.Errorf("seccomp: no filter for this architecture")
	}
	return seccomp.PassExec(f, arch, uintptr(unsafe.Pointer(path)))
}
