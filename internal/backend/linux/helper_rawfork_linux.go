package linux

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sandbox's init and the IPC namespace's holder are children of the
// zygote that never exec: a forked copy of a Go program can run no Go
// runtime (its other threads are gone), so their code below uses raw
// system calls only, allocates nothing, takes no lock and never grows its
// stack. Every function a child runs is go:nosplit, which the linker
// checks, and go:norace. Starting another Go runtime instead cost each
// sandbox one exec of the whole binary and several milliseconds of CPU,
// and a second copy of the runtime's memory while it ran.

// allSignals is a signal set with every signal in it.
var allSignals = ^uint64(0)

// rawClone forks the calling thread with flags (plus SIGCHLD as the exit
// signal), with every signal blocked across the fork so that no Go signal
// handler can run in the child. It returns the child's pid in the parent;
// in the child it runs child(arg) and exits with what it returns. The
// calling thread must be locked.
//
//go:nosplit
//go:norace
func rawClone(flags uintptr, child func(unsafe.Pointer) int, arg unsafe.Pointer) (int, syscall.Errno) {
	var old uint64
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&allSignals)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	pid, _, errno := syscall.RawSyscall6(syscall.SYS_CLONE, flags|uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if errno == 0 && pid == 0 {
		code := child(arg)
		for {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, uintptr(code), 0, 0)
		}
	}
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	return int(pid), errno
}

// holderChild is the IPC namespace's holder: it sleeps until killed.
//
//go:nosplit
//go:norace
func holderChild(unsafe.Pointer) int {
	syscall.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	for { // ppoll of nothing, without a timeout: pause(2), which arm64 lacks
		syscall.RawSyscall6(syscall.SYS_PPOLL, 0, 0, 0, 0, 0, 0)
	}
}

//go:nosplit
//go:norace
func rawWrite(fd int, b *byte, n int) int {
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(b)), uintptr(n))
	if e != 0 {
		return -1
	}
	return int(r)
}

//go:nosplit
//go:norace
func rawRead(fd int, b *byte, n int) int {
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(b)), uintptr(n))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return -1
		}
		return int(r)
	}
}

//go:nosplit
//go:norace
func rawMount(src, target, fstype *byte, flags uintptr) syscall.Errno {
	_, _, e := syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(src)), uintptr(unsafe.Pointer(target)), uintptr(unsafe.Pointer(fstype)), flags, 0, 0)
	return e
}

// rawFail writes msg and errno e (as decimal) to fd, and returns 125.
//
//go:nosplit
//go:norace
func rawFail(fd int, msg *rawMsg, e syscall.Errno) int {
	n := msg.n
	var digits [20]byte
	d := len(digits)
	v := uint64(e)
	for {
		d--
		digits[d] = byte('0' + v%10)
		v /= 10
		if v == 0 || d == 0 {
			break
		}
	}
	for i := d; i < len(digits) && n < len(msg.b); i++ {
		msg.b[n] = digits[i]
		n++
	}
	rawWrite(fd, &msg.b[0], n)
	return 125
}

// rawMsg is a message prepared before a fork: n bytes of b.
type rawMsg struct {
	b [64]byte
	n int
}

func newRawMsg(s string) rawMsg {
	var m rawMsg
	m.n = copy(m.b[:], s)
	return m
}

// cstr returns s as a NUL-terminated string for a raw call.
func cstr(s string) *byte {
	p, err := unix.BytePtrFromString(s)
	if err != nil {
		panic(err) // the paths here are constants without NUL
	}
	return p
}
