//go:build amd64 || arm64

package linux

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// haveVfork: rawVfork exists on this architecture.
const haveVfork = true

// rawVfork is clone(flags) for a child that shares the caller's stack
// (helper_vfork_linux_*.s).
func rawVfork(flags uintptr) (pid uintptr, errno uintptr)

// rawVforkExec starts the command's child as os/exec starts every child:
// CLONE_VM|CLONE_VFORK, so that no page table is copied and this thread
// waits until the child has exec'd or failed. The child runs execChild on
// this thread's stack, below this frame, with every signal blocked until
// execChild resets the handlers; its writes to a (descriptor numbers, the
// errno) are the parent's to read.
//
//go:nosplit
//go:norace
func rawVforkExec(a *execArgs) (int, syscall.Errno) {
	var old uint64
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&allSignals)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	pid, errno := rawVfork(unix.CLONE_VM | unix.CLONE_VFORK | unix.CLONE_PARENT | uintptr(syscall.SIGCHLD))
	if errno == 0 && pid == 0 {
		code := execChild(unsafe.Pointer(a))
		for {
			syscall.RawSyscall(syscall.SYS_EXIT, uintptr(code), 0, 0)
		}
	}
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	return int(pid), syscall.Errno(errno)
}
