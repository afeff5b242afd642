package linux

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The socket guard closes what Landlock (ABI 7 and before) leaves open:
// connect() on a path Unix socket. Any directory the sandbox sees live (its
// working directory, a grant, the curated home) can grow a host socket
// after the sandbox started, and whoever connects to a tmux server, an
// agent or a Jupyter kernel drives it.
//
// Every command runs under a seccomp filter that hands connect, sendto
// with a destination, sendmsg and sendmmsg to the zygote
// (SECCOMP_RET_USER_NOTIF; the zygote itself is not filtered). The zygote
// never lets the kernel carry on with such a call (no
// SECCOMP_USER_NOTIF_FLAG_CONTINUE): another thread of the caller could
// swap the descriptor or rewrite the address between the check and the
// kernel's second reading. It carries the call out itself, on the very same
// open socket (pidfd_getfd), with the address and data copied once
// (process_vm_readv), and answers with the result.
//
// A path address is resolved as the caller would (from its working
// directory), opened with O_PATH, and must be a socket file that a process
// of this sandbox bound (it is listed by sock_diag in the sandbox's network
// namespace, where every socket the sandbox creates lives and no host
// socket does) or that the user granted (Config.Sockets). The call then
// goes to that opened file, through its /proc/PID/fd link, so the object
// checked is the object reached. Anything else fails with EACCES and is
// recorded for the sandbox's refusals.
//
// Abstract addresses are looked up in the socket's own network namespace;
// they are carried out only for sockets of the sandbox's namespace (EPERM
// otherwise), which holds no host socket. Other families are carried out
// unchanged: their socket's network namespace is fixed at creation.
type sockGuard struct {
	// proc is the host's /proc, opened before the pivot, where the
	// callers' pids (in the zygote's PID namespace) name them.
	proc int
	// selfFD is the zygote's own /proc/PID/fd in it: connect and send
	// name an opened socket file by its number there (see atFD).
	selfFD int
	// netns is the cookie of the sandbox's network namespace.
	netns uint64
	// granted are the socket files the user allowed.
	granted map[fileID]bool
	// inetTCP is whether the filter allows TCP sockets, for the refusal
	// of other ones (describeSocket).
	inetTCP bool

	jobs    chan func(ok bool) // idle workers of atFD take jobs here
	workers atomic.Int32       // how many there are, at most maxWorkers

	budget pendingBudget // what the calls being carried out hold (helper_sockbounds_linux.go)

	// The refusals recorded (helper_refusals_linux.go).
	mu      sync.Mutex
	refused []refusedCall
	seen    map[refusedCall]bool
	kinds   map[string]*refusalKind
	classes map[string]bool // the classes kept past the bounds (helper_refusals_linux.go)
	// notify, when not -1, is the zygote's channel to the init, told of
	// each new refusal so that moat asks for them only when there are
	// some (initRefused).
	notify int
}

// maxWorkers bounds the threads of atFD: beyond it, a call waits for one
// to be free, so a sandbox that holds many blocking calls open slows only
// itself.
const maxWorkers = 128

// openSockGuard prepares the guard. It must run in the sandbox's network
// namespace before the pivot, while the host's /proc is still there.
func openSockGuard(grants []fileID) (*sockGuard, error) {
	g := &sockGuard{proc: -1, selfFD: -1, notify: -1, granted: map[fileID]bool{}, jobs: make(chan func(bool))}
	for _, id := range grants {
		g.granted[id] = true
	}
	var err error
	if g.proc, err = unix.Open("/proc", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		return nil, fmt.Errorf("socket guard: /proc: %w", err)
	}
	// The callers' pids must mean the same in this /proc as to the
	// kernel that reports them: the /proc of our own PID namespace.
	buf := make([]byte, 32)
	n, err := unix.Readlinkat(g.proc, "self", buf)
	if err != nil || string(buf[:n]) != strconv.Itoa(unix.Getpid()) {
		g.close()
		return nil, fmt.Errorf("socket guard: /proc does not belong to this PID namespace")
	}
	if g.selfFD, err = unix.Openat(g.proc, "self/fd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		g.close()
		return nil, fmt.Errorf("socket guard: /proc/self/fd: %w", err)
	}
	probe, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		g.close()
		return nil, fmt.Errorf("socket guard: %w", err)
	}
	g.netns, err = netnsCookie(probe)
	unix.Close(probe)
	if err != nil {
		g.close()
		return nil, fmt.Errorf("socket guard: network namespace cookie: %w", err)
	}
	return g, nil
}

func (g *sockGuard) close() {
	if g.proc >= 0 {
		unix.Close(g.proc)
	}
	if g.selfFD >= 0 {
		unix.Close(g.selfFD)
	}
}

// seccompNotif is struct seccomp_notif; seccompResp is struct
// seccomp_notif_resp.
type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

type seccompResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// serve answers the calls of one command's filter until no process uses
// it any more. It answers a call on a non-blocking socket (or with
// MSG_DONTWAIT) itself, on a thread set up like atFD's; a call that may
// block goes to a goroutine of its own, so that it holds up no other call.
// The listener is closed once serve and every call it handed on are done:
// a call still being carried out answers on it, and must not reach
// whatever file its number names next.
func (g *sockGuard) serve(listener int) {
	inflight := new(sync.WaitGroup)
	defer func() { go func() { inflight.Wait(); unix.Close(listener) }() }()
	runtime.LockOSThread() // never unlocked: the thread's cwd is not the process's
	inline := unix.Unshare(unix.CLONE_FS) == nil && unix.Fchdir(g.selfFD) == nil
	// Wake the supervisor on the caller's CPU (Linux 6.6); an older
	// kernel just schedules it normally.
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	pfd := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
	for {
		pfd[0].Revents = 0
		if _, err := unix.Poll(pfd, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: every process under the filter is gone
		}
		n := new(seccompNotif)
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(n))); e != 0 {
			if e == unix.EINTR || e == unix.ENOENT {
				continue // the caller went away before we read it
			}
			return
		}
		if g.observe(listener, n) {
			continue // an exec or a refused socket, answered already
		}
		inflight.Add(1)
		if inline {
			g.answer(listener, inflight, n, true)
		} else {
			go g.answer(listener, inflight, n, false)
		}
	}
}

// answer carries out one call and sends its result. inline, on serve's
// thread, hands a call that may block to a goroutine of its own.
func (g *sockGuard) answer(listener int, inflight *sync.WaitGroup, n *seccompNotif, inline bool) {
	c := &call{g: g, listener: listener, inflight: inflight, n: n, tid: int(n.Pid), inline: inline}
	taken, queued := g.budget.takeCall(queuedCall{listener, inflight, n})
	switch {
	case queued:
		// Past the sandbox's budget of pending calls: the caller
		// waits until a call ends (respond carries it out then).
		return
	case !taken:
		// Past the queue too: its call fails, and the zygote holds
		// nothing more for it.
		c.respond(0, unix.EAGAIN)
		return
	}
	g.carryOut(c)
}

// carryOut carries out call c, which holds one of the sandbox's calls.
func (g *sockGuard) carryOut(c *call) {
	inline := c.inline
	c.heldCall = true
	if errno := c.prepare(); errno != 0 {
		c.respond(0, errno)
		return
	}
	if inline && c.mayBlock() {
		// A goroutine of its own may wait as long as it takes; an
		// address that names an opened socket file goes on to atFD.
		// (Handing the whole call to a locked thread of atFD's costs
		// more: waking a locked thread is slower than a goroutine.)
		c.inline = false
		go func() { c.respond(c.perform()) }()
		return
	}
	c.respond(c.perform())
}

// respond sends the call's result and releases what it holds.
func (c *call) respond(val int64, errno unix.Errno) {
	defer c.inflight.Done()
	c.close()
	if c.heldCall {
		if q, ok := c.g.budget.give(1, c.heldBytes, c.heldFDs); ok {
			// A queued call takes the call given back, on a
			// goroutine of its own: respond's caller may be serve.
			next := &call{g: c.g, listener: q.listener, inflight: q.inflight, n: q.n, tid: int(q.n.Pid)}
			go c.g.carryOut(next)
		}
		c.heldCall, c.heldBytes, c.heldFDs = false, 0, 0
	}
	r := seccompResp{ID: c.n.ID, Val: val}
	if errno != 0 {
		r.Val, r.Error = 0, -int32(errno)
	}
	// ENOENT: the caller was killed meanwhile; nothing to answer.
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(c.listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&r)))
}

// idValid reports whether the caller of notification id still waits for
// the answer, so that its pid still names it.
func idValid(listener int, id uint64) bool {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return e == 0
}

// pidfdThread is PIDFD_THREAD (Linux 6.9): a pidfd for one thread.
const pidfdThread = unix.O_EXCL

// call is one supervised call being carried out.
type call struct {
	g        *sockGuard
	listener int
	inflight *sync.WaitGroup // serve's: done once answered
	n        *seccompNotif
	tid      int
	pidfd    int
	sock     int // the caller's socket, the same open file
	domain   int
	typ      int
	extra    []int // descriptors to close at the end
	inline   bool  // on serve's thread, whose cwd is atFD's
	// What the call holds of its sandbox's budget (pendingBudget).
	heldCall  bool
	heldBytes int64
	heldFDs   int
}

func (c *call) close() {
	for _, fd := range c.extra {
		unix.Close(fd)
	}
}

// keep registers fd for closing when the call is done.
func (c *call) keep(fd int) int { c.extra = append(c.extra, fd); return fd }

// mayBlock reports whether the call can wait: a blocking socket, without
// MSG_DONTWAIT.
func (c *call) mayBlock() bool {
	fl, err := unix.FcntlInt(uintptr(c.sock), unix.F_GETFL, 0)
	if err == nil && fl&unix.O_NONBLOCK != 0 {
		return false
	}
	var flags uint64
	switch uintptr(c.n.Nr) {
	case unix.SYS_SENDTO, unix.SYS_SENDMMSG:
		flags = c.n.Args[3]
	case unix.SYS_SENDMSG:
		flags = c.n.Args[2]
	default:
		return true
	}
	return flags&unix.MSG_DONTWAIT == 0
}

// prepare takes hold of the caller (a pidfd) and of its socket, the same
// open file (pidfd_getfd), and learns the socket's domain and type.
func (c *call) prepare() unix.Errno {
	listener, n := c.listener, c.n
	pidfd, err := unix.PidfdOpen(c.tid, pidfdThread)
	if err != nil {
		return unix.EPERM
	}
	c.pidfd = c.keep(pidfd)
	if !idValid(listener, n.ID) {
		return unix.EPERM // gone; the pid may already name another task
	}
	sock, err := unix.PidfdGetfd(c.pidfd, int(int32(n.Args[0])), 0)
	if err != nil {
		if err == unix.EBADF {
			return unix.EBADF
		}
		return unix.EPERM // e.g. a caller that made itself undumpable
	}
	c.sock = c.keep(sock)
	if c.domain, err = unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil {
		return errnoOf(err)
	}
	if c.typ, err = unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE); err != nil {
		return errnoOf(err)
	}
	return 0
}

// perform carries out the prepared call: it returns the syscall's result,
// or an errno.
func (c *call) perform() (int64, unix.Errno) {
	n := c.n
	switch uintptr(n.Nr) {
	case unix.SYS_CONNECT:
		return c.connect()
	case unix.SYS_SENDTO:
		return c.sendto()
	case unix.SYS_SENDMSG:
		return c.sendmsg(n.Args[1], int(int32(n.Args[2])))
	case unix.SYS_SENDMMSG:
		return c.sendmmsg()
	}
	return 0, unix.ENOSYS
}

func errnoOf(err error) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return unix.EPERM
}

// read copies n bytes at addr of the caller's memory.
func (c *call) read(addr uint64, n int) ([]byte, unix.Errno) {
	b := make([]byte, n)
	if n == 0 {
		return b, 0
	}
	got, err := unix.ProcessVMReadv(c.tid, []unix.Iovec{{Base: &b[0], Len: uint64(n)}},
		[]unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
	if err != nil || got != n {
		return nil, unix.EFAULT
	}
	return b, 0
}

// sockaddrMax is sizeof(struct sockaddr_storage), the most an address may
// take (the kernel refuses a longer one with EINVAL).
const sockaddrMax = 128

// readAddr copies a socket address of the caller.
func (c *call) readAddr(addr uint64, l int) ([]byte, unix.Errno) {
	if l < 0 || l > sockaddrMax {
		return nil, unix.EINVAL
	}
	if addr == 0 {
		if l == 0 {
			return nil, 0
		}
		return nil, unix.EFAULT
	}
	return c.read(addr, l)
}

// target is where an address leads once checked: the address to use
// instead (a path address becomes the number of an opened socket file,
// relative to atFD's directory), and whether atFD must carry it out.
type target struct {
	addr []byte
	atFD bool
}

// checkAddr decides an address given to the caller's socket. Only an
// AF_UNIX socket with an AF_UNIX address looks anything up; every other
// combination is carried out as given, the kernel then failing it or
// ignoring the address (stream and seqpacket Unix sockets do not look up
// a destination, nor does TCP without Fast Open, which the filter refuses).
// forSend is true for a destination of sendto or sendmsg, which only a
// datagram socket looks up.
func (c *call) checkAddr(addr []byte, forSend bool) (target, unix.Errno) {
	if c.domain != unix.AF_UNIX || len(addr) < 2 || binary.NativeEndian.Uint16(addr) != unix.AF_UNIX {
		return target{addr: addr}, 0
	}
	if forSend && c.typ != unix.SOCK_DGRAM {
		return target{addr: addr}, 0
	}
	if len(addr) <= 2 {
		return target{addr: addr}, 0 // EINVAL from the kernel
	}
	path := addr[2:]
	if path[0] == 0 {
		// Abstract: looked up in the socket's own network namespace.
		cookie, err := netnsCookie(c.sock)
		if err != nil || cookie != c.g.netns {
			return target{}, unix.EPERM
		}
		return target{addr: addr}, 0
	}
	for i, b := range path {
		if b == 0 {
			path = path[:i]
			break
		}
	}
	fd, shown, errno := c.openSocketFile(string(path))
	if errno != 0 {
		if errno == unix.EACCES {
			c.g.refuse(refusedCall{Kind: refusedUnixSocket, Subject: shown})
		}
		return target{}, errno
	}
	name := strconv.Itoa(fd)
	out := make([]byte, 2+len(name)+1)
	binary.NativeEndian.PutUint16(out, unix.AF_UNIX)
	copy(out[2:], name)
	return target{addr: out, atFD: true}, 0
}

// openSocketFile opens path as the caller names it and checks that it is a
// socket file this sandbox may reach. It returns the opened file and the
// path to report.
func (c *call) openSocketFile(path string) (int, string, unix.Errno) {
	shown := path
	dir := unix.AT_FDCWD // an absolute path: the caller's root is ours
	if !filepath.IsAbs(path) {
		cwd, err := unix.Openat(c.g.proc, strconv.Itoa(c.tid)+"/cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, shown, unix.EACCES
		}
		dir = c.keep(cwd)
		buf := make([]byte, unix.PathMax)
		if n, err := unix.Readlinkat(c.g.proc, strconv.Itoa(c.tid)+"/cwd", buf); err == nil {
			shown = filepath.Join(string(buf[:n]), path)
		}
		if !idValid(c.listener, c.n.ID) {
			return -1, shown, unix.EPERM
		}
	}
	// Links are followed, as connect follows them.
	fd, err := unix.Openat(dir, path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, shown, errnoOf(err)
	}
	c.keep(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return -1, shown, errnoOf(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return -1, shown, unix.ECONNREFUSED // what the kernel says of a non-socket
	}
	if c.g.granted[fileID{Dev: st.Dev, Ino: st.Ino}] {
		return fd, shown, 0
	}
	own, err := boundUnixSockets()
	if err != nil {
		return -1, shown, unix.EACCES
	}
	if !own[vfsIDOf(&st)] {
		return -1, shown, unix.EACCES
	}
	return fd, shown, 0
}

// atFD runs f on a thread whose working directory is the zygote's own
// /proc/PID/fd, so that a Unix address naming a descriptor number reaches
// the socket file that descriptor holds: the object checked. (The sandbox's
// /proc, mounted after the pivot, does not show the zygote, so there is no
// absolute path to it.) ok is false when no such thread can be had.
func (g *sockGuard) atFD(f func(ok bool)) {
	done := make(chan struct{})
	g.spawn(func(ok bool) { f(ok); close(done) })
	<-done
}

// spawn runs f on an idle thread of atFD's, or a new one while there are
// fewer than maxWorkers.
func (g *sockGuard) spawn(f func(ok bool)) {
	select {
	case g.jobs <- f:
		return
	default:
	}
	if g.workers.Add(1) <= maxWorkers {
		go g.worker(f)
		return
	}
	g.workers.Add(-1)
	g.jobs <- f
}

// worker is a thread of atFD. It unshares its file system context, so its
// working directory is its own, and never returns to the Go scheduler.
func (g *sockGuard) worker(first func(bool)) {
	runtime.LockOSThread() // never unlocked: the thread's cwd is not the process's
	ok := unix.Unshare(unix.CLONE_FS) == nil && unix.Fchdir(g.selfFD) == nil
	first(ok)
	for job := range g.jobs {
		job(ok)
	}
}

// sockaddrArg passes an address to a raw syscall.
func sockaddrArg(a []byte) (uintptr, uintptr) {
	if len(a) == 0 {
		return 0, 0
	}
	return uintptr(unsafe.Pointer(&a[0])), uintptr(len(a))
}

// reach is the end of every supervised call, once all it needs of the
// caller's memory has been copied: it checks that the caller still waits
// (so that what was read was its memory), decides addr (see checkAddr),
// and carries out the raw syscall f with the address to use instead, on an
// atFD thread when that address needs one and the call is not on one
// already.
func (c *call) reach(addr []byte, forSend bool, f func(addr []byte) (uintptr, unix.Errno)) (int64, unix.Errno) {
	if !idValid(c.listener, c.n.ID) {
		return 0, unix.EPERM
	}
	t, errno := c.checkAddr(addr, forSend)
	if errno != 0 {
		return 0, errno
	}
	var r uintptr
	var e unix.Errno
	if !t.atFD || c.inline {
		r, e = f(t.addr)
	} else {
		c.g.atFD(func(ok bool) {
			if !ok {
				e = unix.EACCES
				return
			}
			r, e = f(t.addr)
		})
	}
	runtime.KeepAlive(t.addr)
	if e != 0 {
		return 0, e
	}
	return int64(r), 0
}

func (c *call) connect() (int64, unix.Errno) {
	addr, errno := c.readAddr(c.n.Args[1], int(int32(c.n.Args[2])))
	if errno != 0 {
		return 0, errno
	}
	return c.reach(addr, false, func(addr []byte) (uintptr, unix.Errno) {
		p, l := sockaddrArg(addr)
		_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(c.sock), p, l)
		return 0, e
	})
}

// Bounds on the data copied for one send: a stream socket may send less
// than asked (the caller sends the rest); a datagram or seqpacket message
// is all or nothing.
const (
	maxStreamCopy  = 1 << 20
	maxMessageCopy = 8 << 20
)

// dataBound returns how much of total bytes to copy, or EMSGSIZE.
func (c *call) dataBound(total uint64) (int, unix.Errno) {
	if c.typ == unix.SOCK_STREAM {
		return int(min(total, maxStreamCopy)), 0
	}
	if total > maxMessageCopy {
		return 0, unix.EMSGSIZE
	}
	return int(total), 0
}

// send is reach for a send with the caller's flags: f gets them with
// MSG_NOSIGNAL added, as a broken connection must not signal the zygote,
// and send delivers the SIGPIPE the caller would have had.
func (c *call) send(addr []byte, flags int, f func(addr []byte, flags uintptr) (uintptr, unix.Errno)) (int64, unix.Errno) {
	r, e := c.reach(addr, true, func(addr []byte) (uintptr, unix.Errno) {
		return f(addr, uintptr(flags|unix.MSG_NOSIGNAL))
	})
	if e == unix.EPIPE && flags&unix.MSG_NOSIGNAL == 0 {
		_ = unix.PidfdSendSignal(c.pidfd, unix.SIGPIPE, nil, 0)
	}
	return r, e
}

func (c *call) sendto() (int64, unix.Errno) {
	a := c.n.Args
	flags := int(int32(a[3]))
	addr, errno := c.readAddr(a[4], int(int32(a[5])))
	if errno != 0 {
		return 0, errno
	}
	n, errno := c.dataBound(a[2])
	if errno != 0 {
		return 0, errno
	}
	var data []byte
	if n > 0 {
		if a[1] == 0 {
			return 0, unix.EFAULT
		}
		if errno := c.reserve(int64(n), 0); errno != 0 {
			return 0, errno
		}
		if data, errno = c.read(a[1], n); errno != 0 {
			return 0, errno
		}
	}
	return c.send(addr, flags, func(addr []byte, flags uintptr) (uintptr, unix.Errno) {
		var p uintptr
		if len(data) > 0 {
			p = uintptr(unsafe.Pointer(&data[0]))
		}
		ap, al := sockaddrArg(addr)
		r, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(c.sock), p, uintptr(len(data)), flags, ap, al)
		runtime.KeepAlive(data)
		return r, e
	})
}

// msghdrLen is sizeof(struct msghdr) on the 64-bit ABIs: name (8),
// namelen (4, padded to 8), iov (8), iovlen (8), control (8), controllen
// (8), flags (4, padded to 8).
const (
	msghdrLen  = 56
	mmsghdrLen = 64 // struct mmsghdr: a msghdr and msg_len, padded
	uioMaxIOV  = 1024
	maxControl = 128 << 10
)

// sendmsg carries out a sendmsg of the msghdr at hdr: the data is copied,
// descriptors passed with SCM_RIGHTS are taken from the caller
// (pidfd_getfd) so the same files travel, and SCM_CREDENTIALS is left to
// the kernel, which attaches the sender's (the zygote's) credentials.
func (c *call) sendmsg(hdr uint64, flags int) (int64, unix.Errno) {
	h, errno := c.read(hdr, msghdrLen)
	if errno != 0 {
		return 0, errno
	}
	u64 := func(off int) uint64 { return binary.NativeEndian.Uint64(h[off:]) }
	// As the kernel reads a msghdr: no name without a pointer, and a
	// name longer than a sockaddr_storage cut to one.
	namePtr, nameLen := u64(0), int(int32(binary.NativeEndian.Uint32(h[8:])))
	if nameLen < 0 {
		return 0, unix.EINVAL
	}
	if namePtr == 0 {
		nameLen = 0
	}
	addr, errno := c.readAddr(namePtr, min(nameLen, sockaddrMax))
	if errno != 0 {
		return 0, errno
	}
	iovPtr, iovLen := u64(16), u64(24)
	if iovLen > uioMaxIOV {
		return 0, unix.EMSGSIZE
	}
	var remote []unix.RemoteIovec
	var total uint64
	if iovLen > 0 {
		raw, errno := c.read(iovPtr, int(iovLen)*16)
		if errno != 0 {
			return 0, errno
		}
		for i := 0; i < int(iovLen); i++ {
			base, l := binary.NativeEndian.Uint64(raw[16*i:]), binary.NativeEndian.Uint64(raw[16*i+8:])
			if l > 1<<31 {
				return 0, unix.EINVAL
			}
			if l > 0 {
				remote = append(remote, unix.RemoteIovec{Base: uintptr(base), Len: int(l)})
				total += l
			}
		}
	}
	n, errno := c.dataBound(total)
	if errno != 0 {
		return 0, errno
	}
	ctlPtr, ctlLen := u64(32), u64(40)
	if ctlLen > maxControl {
		return 0, unix.ENOBUFS
	}
	// The data and the control messages are copied: both are held
	// until the call is answered.
	if errno := c.reserve(int64(n)+int64(ctlLen), 0); errno != 0 {
		return 0, errno
	}
	data := make([]byte, n)
	if n > 0 {
		// The first n bytes, across the caller's buffers.
		var want []unix.RemoteIovec
		left := n
		for _, r := range remote {
			if left == 0 {
				break
			}
			r.Len = min(r.Len, left)
			want = append(want, r)
			left -= r.Len
		}
		got, err := unix.ProcessVMReadv(c.tid, []unix.Iovec{{Base: &data[0], Len: uint64(n)}}, want, 0)
		if err != nil || got != n {
			return 0, unix.EFAULT
		}
	}
	var oob []byte
	if ctlLen > 0 {
		ctl, errno := c.read(ctlPtr, int(ctlLen))
		if errno != 0 {
			return 0, errno
		}
		if oob, errno = c.translateControl(ctl); errno != 0 {
			return 0, errno
		}
	}
	return c.send(addr, flags, func(addr []byte, flags uintptr) (uintptr, unix.Errno) {
		var msg unix.Msghdr
		var iov unix.Iovec
		if len(data) > 0 {
			iov = unix.Iovec{Base: &data[0], Len: uint64(len(data))}
			msg.Iov, msg.Iovlen = &iov, 1
		}
		if len(addr) > 0 {
			msg.Name, msg.Namelen = &addr[0], uint32(len(addr))
		}
		if len(oob) > 0 {
			msg.Control, msg.Controllen = &oob[0], uint64(len(oob))
		}
		r, _, e := unix.Syscall(unix.SYS_SENDMSG, uintptr(c.sock), uintptr(unsafe.Pointer(&msg)), flags)
		runtime.KeepAlive(data)
		runtime.KeepAlive(oob)
		return r, e
	})
}

// translateControl rebuilds the caller's control messages for the
// zygote: SCM_RIGHTS descriptors become the zygote's own copies of the
// same files, SCM_CREDENTIALS is dropped, and the rest is kept as it is.
func (c *call) translateControl(ctl []byte) ([]byte, unix.Errno) {
	msgs, err := unix.ParseSocketControlMessage(ctl)
	if err != nil {
		return nil, unix.EINVAL
	}
	var out []byte
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_CREDENTIALS {
			continue
		}
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_RIGHTS {
			theirs, err := unix.ParseUnixRights(&m)
			if err != nil {
				return nil, unix.EINVAL
			}
			// Each descriptor taken is one more in the zygote's
			// table: counted against the sandbox's budget.
			if errno := c.reserve(0, len(theirs)); errno != 0 {
				return nil, errno
			}
			ours := make([]int, len(theirs))
			for i, fd := range theirs {
				got, err := unix.PidfdGetfd(c.pidfd, fd, 0)
				if err != nil {
					return nil, unix.EBADF
				}
				ours[i] = c.keep(got)
			}
			out = append(out, unix.UnixRights(ours...)...)
			continue
		}
		b := make([]byte, unix.CmsgSpace(len(m.Data)))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = m.Header.Level, m.Header.Type
		h.SetLen(unix.CmsgLen(len(m.Data)))
		copy(b[unix.CmsgLen(0):], m.Data)
		out = append(out, b...)
	}
	return out, 0
}

// sendmmsg carries out the first message only and says so (1), which
// sendmmsg may always do; the caller sends the rest again.
func (c *call) sendmmsg() (int64, unix.Errno) {
	a := c.n.Args
	if uint32(a[2]) == 0 {
		return 0, 0
	}
	sent, errno := c.sendmsg(a[1], int(int32(a[3])))
	if errno != 0 {
		return 0, errno
	}
	if !idValid(c.listener, c.n.ID) {
		return 0, unix.EPERM // gone: its tid may name another task by now
	}
	var l [4]byte
	binary.NativeEndian.PutUint32(l[:], uint32(sent))
	got, err := unix.ProcessVMWritev(c.tid, []unix.Iovec{{Base: &l[0], Len: 4}},
		[]unix.RemoteIovec{{Base: uintptr(a[1] + msghdrLen), Len: 4}}, 0)
	if err != nil || got != 4 {
		return 0, unix.EFAULT
	}
	return 1, 0
}

// netnsCookie returns the cookie of the network namespace of socket fd.
func netnsCookie(fd int) (uint64, error) {
	var v uint64
	l := uint32(8)
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_NETNS_COOKIE,
		uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return 0, e
	}
	return v, nil
}
