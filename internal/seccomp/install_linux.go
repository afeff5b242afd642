package seccomp

import (
	"fmt"
	"unsafe"

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
