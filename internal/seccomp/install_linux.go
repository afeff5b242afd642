package seccomp

import (
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// This is the package's only Linux-only file: the kernel's struct sock_filter
// (unix.SockFilter) exists only in golang.org/x/sys/unix for Linux, so both
// Assemble, which produces it, and Install, which consumes it, live here.

// Assemble builds the program for arch with opts (see Build) and assembles it
// into the kernel's struct sock_filter form, ready for Install. Like Build,
// it fails for an unsupported Arch, the zero Arch included.
func Assemble(arch Arch, opts Options) ([]unix.SockFilter, error) {
	raw, err := assemble(arch, opts)
	if err != nil {
		return nil, err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return filter, nil
}

// PassExec returns filter, assembled for arch, preceded by a prefix that
// lets the one execve whose pathname argument is the pointer path through
// without the filter (passExecPrefix).
func PassExec(filter []unix.SockFilter, arch Arch, path uintptr) ([]unix.SockFilter, error) {
	prefix, err := passExecPrefix(arch, uint64(path))
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prefix)
	if err != nil {
		return nil, fmt.Errorf("seccomp: assemble: %w", err)
	}
	if len(raw)+len(filter) > maxInsns {
		return nil, fmt.Errorf("seccomp: program: %d instructions, more than the kernel's %d", len(raw)+len(filter), maxInsns)
	}
	out := make([]unix.SockFilter, 0, len(raw)+len(filter))
	for _, r := range raw {
		out = append(out, unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K})
	}
	return append(out, filter...), nil
}

// Install installs filter on the calling OS thread only, with
// seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog): no SECCOMP_FILTER_FLAG_TSYNC,
// so the Go runtime's other threads stay unfiltered. Threads later created
// by the calling thread, and programs it executes, inherit the filter.
//
// The caller must have locked the goroutine to its thread
// (runtime.LockOSThread) and, unless it has CAP_SYS_ADMIN, set
// PR_SET_NO_NEW_PRIVS on it. filter must come from Assemble for NativeArch.
func Install(filter []unix.SockFilter) error {
	if len(filter) == 0 || len(filter) > maxInsns {
		return fmt.Errorf("seccomp: install: program has %d instructions, want 1 to %d", len(filter), maxInsns)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return fmt.Errorf("seccomp: install: %w", errno)
	}
	return nil
}

// InstallListener is Install with SECCOMP_FILTER_FLAG_NEW_LISTENER and
// SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: it returns the listener
// (close-on-exec) on which the calls the filter hands to the supervisor
// arrive (SECCOMP_IOCTL_NOTIF_RECV). Once the supervisor has received a
// call, only a fatal signal interrupts the caller, so a call the
// supervisor carries out is never restarted and carried out twice. The
// kernel allows one listener per filter chain.
func InstallListener(filter []unix.SockFilter) (int, error) {
	if len(filter) == 0 || len(filter) > maxInsns {
		return -1, fmt.Errorf("seccomp: install: program has %d instructions, want 1 to %d", len(filter), maxInsns)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return -1, fmt.Errorf("seccomp: install with listener: %w", errno)
	}
	return int(fd), nil
}

// ListenerSupported reports whether the kernel accepts the flags
// InstallListener uses, without installing anything: with a NULL program
// the kernel checks the flags first (EINVAL when it does not know them)
// and then fails to copy the program (EFAULT).
func ListenerSupported() bool {
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, 0)
	return errno == unix.EFAULT
}
