package linux

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// initStart is an init that has been forked and boots while the zygote
// builds the rest of the sandbox.
type initStart struct {
	sock int // the zygote's end of its channel to the init
	pid  int // the init's pid in the zygote's PID namespace, which the zygote must reap
	args *initArgs
}

// The init is PID 1 of the sandbox: a raw child of the zygote
// (helper_rawfork_linux.go), which mounts the sandbox's /proc, reaps
// orphans, kills every other process of the sandbox when asked, and exits
// when moat's control socket closes, which ends the whole PID namespace.
// Its two channels are sequenced-packet sockets:
//   - moat's (initCtrlFD): a request of one byte, initSweep or initQuery,
//     answered with initReply's encoding (encodeInitReply);
//   - the zygote's (initZygoteFD): first a go-ahead byte, answered "ok\n"
//     once /proc is mounted (or why not), then initKill plus what the
//     memory watch counted, when the sandbox passed its memory limit, and
//     initRefused when the socket guard refused a new path.
const (
	initCtrlFD   = 3
	initZygoteFD = 4

	initSweep   = 's' // kill every other process, then answer
	initQuery   = 'q' // only answer
	initKill    = 'K' // from the zygote: the memory limit was passed
	initRefused = 'R' // from the zygote: the socket guard has new refusals

	// The first byte of a reply to moat.
	initReplyKilled   = 1 << 0 // the memory watch killed the sandbox; what it counted follows
	initReplyRefusals = 1 << 1 // the socket guard has refusals to collect
)

// initArgs is everything the init needs, prepared before the fork: the
// child can allocate nothing.
type initArgs struct {
	ctrl, zyg, null int // descriptors to move to initCtrlFD, initZygoteFD and 0-2
	procTarget      *byte
	procFS          *byte
	sysPath         *byte
	chld            uint64 // SIGCHLD's signal set
	capHdr          unix.CapUserHeader
	capData         [2]unix.CapUserData
	failProc        rawMsg
	failSys         rawMsg
	failCaps        rawMsg
	failSignal      rawMsg
	ok              rawMsg
	req             [1]byte
	reply           [1 + initDetailMax]byte
	replyLen        int
	in              [1 + initDetailMax]byte
	sigBuf          [128]byte
	poll            [3]unix.PollFd
}

// initDetailMax bounds what the init keeps of the memory watch's detail.
const initDetailMax = 240

// forkInit starts the sandbox's init as the first process of the PID
// namespace the calling thread unshared. initSock is moat's control
// socket for it. The calling thread must be locked.
func forkInit(initSock int) (*initStart, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		return nil, err
	}
	defer unix.Close(pair[1])
	defer unix.Close(null)
	a := &initArgs{
		ctrl: initSock, zyg: pair[1], null: null,
		procTarget: cstr(stagingRoot + "/proc"),
		procFS:     cstr("proc"),
		sysPath:    cstr(stagingRoot + "/proc/sys"),
		chld:       1 << (unix.SIGCHLD - 1),
		capHdr:     unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3},
		failProc:   newRawMsg("mount /proc: errno "),
		failSys:    newRawMsg("read-only /proc/sys: errno "),
		failCaps:   newRawMsg("drop capabilities: errno "),
		failSignal: newRawMsg("signalfd: errno "),
		ok:         newRawMsg("ok\n"),
	}
	pid, errno := rawClone(0, initChild, unsafe.Pointer(a))
	if errno != 0 {
		unix.Close(pair[0])
		return nil, fmt.Errorf("start init: %w", errno)
	}
	return &initStart{sock: pair[0], pid: pid, args: a}, nil
}

// namespace opens the sandbox's PID namespace, which needs its init to
// exist, through the host's /proc, before the sandbox's root replaces it.
func (i *initStart) namespace() (int, error) {
	fd, err := unix.Open("/proc/thread-self/ns/pid_for_children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("pid namespace: %w", err)
	}
	return fd, nil
}

// finish lets the init mount the sandbox's /proc, which it does once the
// sandbox's root is in place, and waits until it has. It returns the
// zygote's channel to the init, for the memory watch.
func (i *initStart) finish() (int, error) {
	runtime.KeepAlive(i.args) // the child has its own copy; ours may go after the fork
	if _, err := unix.Write(i.sock, []byte{1}); err != nil {
		unix.Close(i.sock)
		return -1, fmt.Errorf("init: %w", err)
	}
	buf := make([]byte, 512)
	n, _ := unix.Read(i.sock, buf)
	if n <= 0 || string(buf[:n]) != "ok\n" {
		unix.Close(i.sock)
		if n <= 0 {
			return -1, fmt.Errorf("init exited before it was ready")
		}
		return -1, fmt.Errorf("init: %s", buf[:n])
	}
	return i.sock, nil
}

// initChild is the init, in the forked child. It returns its exit code.
//
//go:nosplit
//go:norace
func initChild(p unsafe.Pointer) int {
	a := (*initArgs)(p)
	syscall.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	// Copies above every descriptor involved first, so that moving one
	// to its place never overwrites another. Here, in the child, which
	// alone uses its descriptor table: growing the table of the zygote,
	// whose threads share one, waits for an RCU grace period (10 ms).
	above := uintptr(max(a.ctrl, a.zyg, a.null, initZygoteFD) + 1)
	ctrl, _, _ := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(a.ctrl), syscall.F_DUPFD, above)
	zyg, _, _ := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(a.zyg), syscall.F_DUPFD, above)
	null, _, _ := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(a.null), syscall.F_DUPFD, above)
	syscall.RawSyscall(syscall.SYS_DUP3, ctrl, initCtrlFD, 0)
	syscall.RawSyscall(syscall.SYS_DUP3, zyg, initZygoteFD, 0)
	for fd := uintptr(0); fd < 3; fd++ {
		syscall.RawSyscall(syscall.SYS_DUP3, null, fd, 0)
	}
	syscall.RawSyscall(unix.SYS_CLOSE_RANGE, initZygoteFD+1, ^uintptr(0), 0)
	// The go-ahead: the zygote's new root is built, /proc can be mounted
	// in it; it becomes the sandbox's /proc when the zygote pivots.
	if rawRead(initZygoteFD, &a.in[0], len(a.in)) <= 0 {
		return 125
	}
	if e := rawMount(a.procFS, a.procTarget, a.procFS, unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC); e != 0 {
		return rawFail(initZygoteFD, &a.failProc, e)
	}
	// The IPC namespace's limits are the sandbox user's to write (see
	// newLimitedIPC); Landlock refuses it, and so does this mount.
	if e := rawMount(a.sysPath, a.sysPath, nil, unix.MS_BIND|unix.MS_REC); e != 0 {
		return rawFail(initZygoteFD, &a.failSys, e)
	}
	if e := rawMount(nil, a.sysPath, nil, unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC); e != 0 {
		return rawFail(initZygoteFD, &a.failSys, e)
	}
	syscall.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 0, 0)
	if e := rawDropCapabilities(a); e != 0 {
		return rawFail(initZygoteFD, &a.failCaps, e)
	}
	sfd, _, e := syscall.RawSyscall6(unix.SYS_SIGNALFD4, ^uintptr(0), uintptr(unsafe.Pointer(&a.chld)), 8, unix.SFD_NONBLOCK|unix.SFD_CLOEXEC, 0, 0)
	if e != 0 {
		return rawFail(initZygoteFD, &a.failSignal, e)
	}
	rawWrite(initZygoteFD, &a.ok.b[0], a.ok.n)
	a.poll[0] = unix.PollFd{Fd: initCtrlFD, Events: unix.POLLIN}
	a.poll[1] = unix.PollFd{Fd: initZygoteFD, Events: unix.POLLIN}
	a.poll[2] = unix.PollFd{Fd: int32(sfd), Events: unix.POLLIN}
	a.replyLen = 1
	for {
		for { // orphans: reaped whenever one ends
			r, _, _ := syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), 0, syscall.WNOHANG, 0, 0, 0)
			if int(r) <= 0 {
				break
			}
		}
		a.poll[0].Revents, a.poll[1].Revents, a.poll[2].Revents = 0, 0, 0
		_, _, e := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&a.poll[0])), 3, 0, 0, 0, 0)
		if e != 0 {
			continue // EINTR
		}
		if a.poll[2].Revents != 0 {
			rawRead(int(sfd), &a.sigBuf[0], len(a.sigBuf))
		}
		if a.poll[1].Revents != 0 {
			n := rawRead(initZygoteFD, &a.in[0], len(a.in))
			if n > 0 && a.in[0] == initKill {
				syscall.RawSyscall(syscall.SYS_KILL, ^uintptr(0), uintptr(syscall.SIGKILL), 0)
				a.reply[0] |= initReplyKilled
				a.replyLen = 1
				for i := 1; i < n && i < len(a.reply); i++ {
					a.reply[i] = a.in[i]
					a.replyLen++
				}
			}
			if n > 0 && a.in[0] == initRefused {
				a.reply[0] |= initReplyRefusals
			}
			if n <= 0 {
				a.poll[1].Fd = -1 // the zygote is gone; moat will see to the rest
			}
		}
		if a.poll[0].Revents != 0 {
			if rawRead(initCtrlFD, &a.req[0], 1) <= 0 {
				return 0 // moat is gone or closed the sandbox: PID 1 exits, the kernel kills the rest
			}
			if a.req[0] == initSweep {
				syscall.RawSyscall(syscall.SYS_KILL, ^uintptr(0), uintptr(syscall.SIGKILL), 0)
			}
			rawWrite(initCtrlFD, &a.reply[0], a.replyLen)
			a.reply[0], a.replyLen = 0, 1
		}
	}
}

// rawDropCapabilities is dropCapabilities with raw calls.
//
//go:nosplit
//go:norace
func rawDropCapabilities(a *initArgs) syscall.Errno {
	for c := uintptr(0); c <= lastCap; c++ {
		_, _, e := syscall.RawSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0)
		if e == syscall.EINVAL {
			break
		}
	}
	syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0)
	_, _, e := syscall.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&a.capHdr)), uintptr(unsafe.Pointer(&a.capData[0])), 0)
	return e
}

// decodeInitReply reads the init's answer to moat: a byte saying whether the
// memory watch killed the sandbox since the last request, and what it
// counted.
func decodeInitReply(b []byte) initReply {
	if len(b) == 0 {
		return initReply{}
	}
	r := initReply{Refusals: b[0]&initReplyRefusals != 0}
	if b[0]&initReplyKilled != 0 {
		r.MemoryExceeded, r.MemoryDetail = true, string(b[1:])
	}
	return r
}
