//go:build !amd64

package linux

// sysAccess stands for access(2), which this architecture lacks (only
// faccessat): a number no syscall has.
const sysAccess = ^uintptr(0)
