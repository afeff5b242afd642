package seccomp

import (
	"fmt"
	"runtime"
)

// Arch names a target architecture of the generated program. The zero value
// is invalid: Build and Assemble reject it.
type Arch string

// The supported target architectures.
const (
	// AMD64 is x86-64 (AUDIT_ARCH_X86_64, native 64-bit ABI only).
	AMD64 Arch = "amd64"
	// ARM64 is AArch64 (AUDIT_ARCH_AARCH64).
	ARM64 Arch = "arm64"
)

// NativeArch returns the Arch of the running binary, from runtime.GOARCH, and
// whether it is supported. On an unsupported GOARCH it returns the zero Arch
// and false.
func NativeArch() (Arch, bool) {
	switch a := Arch(runtime.GOARCH); a {
	case AMD64, ARM64:
		return a, true
	}
	return "", false
}

// sysTable is what the generator needs to know about one architecture.
type sysTable struct {
	audit uint32 // AUDIT_ARCH_* value in seccomp_data.arch
	x32   bool   // whether syscall numbers >= x32SyscallBit are a second ABI
	nr    map[string]uint32
	// absent lists syscalls that the policy names but the architecture
	// does not have; the generator skips them instead of failing.
	absent map[string]bool
}

// table returns the syscall table of a.
func (a Arch) table() (*sysTable, error) {
	switch a {
	case AMD64:
		return &x86Table, nil
	case ARM64:
		return &aarch64Table, nil
	}
	return nil, fmt.Errorf("seccomp: arch %q: not supported", string(a))
}
