package linux

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sandbox's rlimits bind its commands, never the zygote: a zygote
// under the sandbox's RLIMIT_NOFILE runs out of descriptors as soon as the
// sandbox makes it hold some (supervised calls passing descriptors), and
// its memory watch can then read nothing; under RLIMIT_NPROC it could not
// start a thread; under RLIMIT_CPU it would die of the CPU it spends
// watching. So the zygote forks each command itself (forkExecLimited),
// and the child sets the limits on itself before its exec: from its first
// instruction, the command and everything it forks are bound, with no
// moment in which a fork escapes them.
//
// The child is a vfork of the zygote's calling thread, as os/exec makes
// every child (a fork, copying the zygote's page tables, cost 0.4 ms more
// per command), where the architecture has rawVfork; it runs raw system
// calls only (helper_rawfork_linux.go), then execs.

// execArgs is everything the child needs, prepared before the fork.
type execArgs struct {
	path    *byte
	argv    **byte
	envv    **byte
	dir     *byte // nil: stay
	fds     []int // the command's descriptors 0, 1, 2, ...: moved into place
	nextfd  int   // above every descriptor involved
	pipe    int   // the write end of the exec-status pipe, close-on-exec
	setsid  bool
	setctty bool // make descriptor 0 the controlling terminal
	limits  []rlimitPair
	mask    uint64    // the signal mask the command starts with
	act     [4]uint64 // struct sigaction (handler, flags, restorer, mask)
	dfl     [4]uint64 // SIG_DFL
	errno   uint64
}

// rlimitPair is one limit, ready for prlimit64.
type rlimitPair struct {
	res uintptr
	lim unix.Rlimit
}

// execStart is one command to fork.
type execStart struct {
	path string
	// cpath, when not nil, is path as a C string, to exec with that very
	// pointer (see zygoteProc.forkCommand).
	cpath  *byte
	argv   []string
	env    []string
	dir    string
	files  []int
	setsid bool
	ctty   bool
	limits []rlimit
}

// forkExecLimited forks and execs the command from the calling thread
// (locked: the child inherits its Landlock domain, seccomp filter and
// namespaces), with CLONE_PARENT, its descriptors moved into place and
// every limit set in the child before the exec. It returns the command's
// pid, or why it could not run (an exec failure as its errno).
func forkExecLimited(s *execStart) (int, error) {
	path := s.cpath
	if path == nil {
		var err error
		if path, err = unix.BytePtrFromString(s.path); err != nil {
			return 0, err
		}
	}
	argv, err := syscall.SlicePtrFromStrings(s.argv)
	if err != nil {
		return 0, err
	}
	envv, err := syscall.SlicePtrFromStrings(s.env)
	if err != nil {
		return 0, err
	}
	a := &execArgs{path: path, argv: &argv[0], envv: &envv[0], fds: append([]int(nil), s.files...),
		setsid: s.setsid, setctty: s.ctty}
	if s.dir != "" {
		if a.dir, err = unix.BytePtrFromString(s.dir); err != nil {
			return 0, err
		}
	}
	for _, l := range s.limits {
		a.limits = append(a.limits, rlimitPair{res: uintptr(l.Resource), lim: unix.Rlimit{Cur: l.Value, Max: max(l.Value, l.Hard)}})
	}
	// Descriptors not atomically close-on-exec are made under ForkLock
	// (syscall's convention); none may leak into the fork meanwhile.
	syscall.ForkLock.Lock()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		syscall.ForkLock.Unlock()
		return 0, err
	}
	a.pipe = p[1]
	a.nextfd = max(len(a.fds), p[1])
	for _, fd := range a.fds {
		a.nextfd = max(a.nextfd, fd)
	}
	a.nextfd++
	// The mask the command starts with is the thread's own; rawClone
	// blocks every signal across the fork.
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, 0, uintptr(unsafe.Pointer(&a.mask)), 8, 0, 0)
	var pid int
	var errno syscall.Errno
	if haveVfork {
		pid, errno = rawVforkExec(a) // helper_vfork_linux.go
	} else {
		pid, errno = rawClone(unix.CLONE_PARENT, execChild, unsafe.Pointer(a))
	}
	runtime.KeepAlive(a)
	syscall.ForkLock.Unlock()
	unix.Close(p[1])
	defer unix.Close(p[0])
	if errno != 0 {
		return 0, fmt.Errorf("fork: %w", errno)
	}
	var buf [8]byte
	n, err := readRetry(p[0], buf[:])
	if err != nil {
		// The child's fate is unknown: it must not run unlimited.
		_ = unix.Kill(pid, unix.SIGKILL)
		return 0, fmt.Errorf("read exec status: %w", err)
	}
	if n == 0 {
		return pid, nil // the pipe closed at the exec
	}
	// The child failed and exited; its parent (CLONE_PARENT) reaps it.
	if n != len(buf) {
		return 0, fmt.Errorf("exec status: short read (%d bytes)", n)
	}
	return 0, syscall.Errno(*(*uint64)(unsafe.Pointer(&buf[0])))
}

// execChild is the forked child: it resets signal handlers, moves the
// descriptors, sets the limits and execs. On failure it writes the errno
// to the pipe and exits.
//
//go:nosplit
//go:norace
func execChild(p unsafe.Pointer) int {
	a := (*execArgs)(p)
	var e syscall.Errno
	var r uintptr
	// A signal must not run a Go handler here: each handled signal
	// goes back to its default, ignored ones stay ignored (as across
	// any exec), before the mask is lifted.
	for sig := uintptr(1); sig <= 64; sig++ {
		if sig == uintptr(syscall.SIGKILL) || sig == uintptr(syscall.SIGSTOP) {
			continue
		}
		_, _, e = syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&a.act[0])), 8, 0, 0)
		if e == 0 && a.act[0] > 1 { // neither SIG_DFL (0) nor SIG_IGN (1)
			syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&a.dfl[0])), 0, 8, 0, 0)
		}
	}
	if a.setsid {
		if _, _, e = syscall.RawSyscall(syscall.SYS_SETSID, 0, 0, 0); e != 0 {
			goto fail
		}
	}
	if a.dir != nil {
		if _, _, e = syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(a.dir)), 0, 0); e != 0 {
			goto fail
		}
	}
	// The status pipe above every target, then each descriptor that
	// would be overwritten before its turn.
	if a.pipe < len(a.fds) {
		if r, _, e = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(a.pipe), uintptr(a.nextfd), syscall.O_CLOEXEC); e != 0 {
			goto fail
		}
		a.pipe = int(r)
		a.nextfd++
	}
	for i := 0; i < len(a.fds); i++ {
		if a.fds[i] >= 0 && a.fds[i] < i {
			if r, _, e = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(a.fds[i]), uintptr(a.nextfd), syscall.O_CLOEXEC); e != 0 {
				goto fail
			}
			a.fds[i] = int(r)
			a.nextfd++
		}
	}
	for i := 0; i < len(a.fds); i++ {
		if a.fds[i] == i {
			// Already in place: only its close-on-exec flag goes.
			if _, _, e = syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(i), syscall.F_SETFD, 0); e != 0 {
				goto fail
			}
			continue
		}
		if _, _, e = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(a.fds[i]), uintptr(i), 0); e != 0 {
			goto fail
		}
	}
	if a.setctty {
		if _, _, e = syscall.RawSyscall(syscall.SYS_IOCTL, 0, syscall.TIOCSCTTY, 1); e != 0 {
			goto fail
		}
	}
	for i := 0; i < len(a.limits); i++ {
		if _, _, e = syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, a.limits[i].res, uintptr(unsafe.Pointer(&a.limits[i].lim)), 0, 0, 0); e != 0 {
			goto fail
		}
	}
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&a.mask)), 0, 8, 0, 0)
	_, _, e = syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(a.path)), uintptr(unsafe.Pointer(a.argv)), uintptr(unsafe.Pointer(a.envv)))
fail:
	a.errno = uint64(e)
	rawWrite(a.pipe, (*byte)(unsafe.Pointer(&a.errno)), 8)
	return 253
}
