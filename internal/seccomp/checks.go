package seccomp

import "golang.org/x/net/bpf"

// Argument checks. Each block starts with the syscall's arguments unread and
// ends with a jump whose both branches go to shared returns. All loads are of
// the low 32 bits of an argument (see argLow and the package comment).

// cloneNamespaces are the namespace flags refused to clone. CLONE_NEWTIME is
// not among them: in clone's flags its bit belongs to the exit signal.
const cloneNamespaces = cloneNewNS | cloneNewCgroup | cloneNewUTS | cloneNewIPC |
	cloneNewUser | cloneNewPID | cloneNewNet

// checkClone refuses clone with any namespace flag in arg0 (the flags on
// both amd64 and arm64).
func checkClone(a *asm, _ Options) {
	a.load(argLow(0))
	a.jump(bpf.JumpBitsSet, cloneNamespaces, toEPERM, toAllow)
}

// checkUnshare refuses unshare of any namespace, time included.
func checkUnshare(a *asm, _ Options) {
	a.load(argLow(0))
	a.jump(bpf.JumpBitsSet, cloneNamespaces|cloneNewTime, toEPERM, toAllow)
}

// checkIoctl refuses the terminal ioctls that inject input into a tty:
// TIOCSTI (fake typed characters) and TIOCLINUX (selection paste, and more).
func checkIoctl(a *asm, _ Options) {
	a.load(argLow(1))
	a.jump(bpf.JumpEqual, tiocsti, toEPERM, "")
	a.jump(bpf.JumpEqual, tioclinux, toEPERM, toAllow)
}

// checkSocket allows AF_UNIX sockets and, with opts.AllowInetStream, plain
// TCP over IPv4 or IPv6 (type SOCK_STREAM with any of SOCK_NONBLOCK and
// SOCK_CLOEXEC, protocol 0 or IPPROTO_TCP; not MPTCP). Everything else,
// such as UDP, raw, netlink, packet and vsock sockets, is refused: with
// EPERM, or by the supervisor with opts.NotifyRefusedSockets. Netlink
// always fails here with EPERM: libc opens it to list the interfaces
// (getifaddrs, as Node does at start) and falls back, so naming it would
// only be noise.
func checkSocket(a *asm, opts Options) {
	refused := socketRefused(opts)
	a.load(argLow(0))
	if !opts.AllowInetStream {
		a.jump(bpf.JumpEqual, afUnix, toAllow, "")
		a.jump(bpf.JumpEqual, afNetlink, toEPERM, refused)
		return
	}
	a.jump(bpf.JumpEqual, afUnix, toAllow, "")
	a.jump(bpf.JumpEqual, afNetlink, toEPERM, "")
	a.jump(bpf.JumpEqual, afInet, "socket:inet", "")
	a.jump(bpf.JumpEqual, afInet6, "", refused)
	a.label("socket:inet")
	a.load(argLow(1))
	a.and(sockTypeMask)
	a.jump(bpf.JumpEqual, sockStream, "", refused)
	a.load(argLow(2))
	a.jump(bpf.JumpEqual, 0, toAllow, "")
	a.jump(bpf.JumpEqual, ipprotoTCP, toAllow, refused)
}

// checkSocketpair allows only AF_UNIX pairs.
func checkSocketpair(a *asm, opts Options) {
	a.load(argLow(0))
	a.jump(bpf.JumpEqual, afUnix, toAllow, socketRefused(opts))
}

// socketRefused is where a refused socket or socketpair goes: to the
// supervisor, which records it and fails it with EPERM, when
// opts.NotifyRefusedSockets; else straight to EPERM.
func socketRefused(opts Options) string {
	if opts.NotifyRefusedSockets {
		return toNotify
	}
	return toEPERM
}

// checkSendFlags refuses MSG_FASTOPEN in the flags argument arg: a TCP Fast
// Open send connects without the connect syscall, bypassing Landlock's
// connect hook. With opts.SuperviseSockets the rest goes to the supervisor:
// sendmsg and sendmmsg carry their destination in memory the filter cannot
// read.
func checkSendFlags(arg int) func(a *asm, opts Options) {
	return func(a *asm, opts Options) {
		a.load(argLow(arg))
		a.jump(bpf.JumpBitsSet, msgFastopen, toEPERM, supervised(opts))
	}
}

// supervised is where a socket call goes once its other checks passed: to
// the supervisor when opts.SuperviseSockets, else allowed.
func supervised(opts Options) string {
	if opts.SuperviseSockets {
		return toNotify
	}
	return toAllow
}

// checkConnect hands connect to the supervisor with opts.SuperviseSockets:
// Landlock (ABI 7 and before) does not mediate connect on a path Unix
// socket, and the address sits in memory the filter cannot read.
func checkConnect(a *asm, opts Options) {
	if opts.SuperviseSockets {
		a.ret(retUserNotif)
		return
	}
	a.ret(retAllow)
}

// checkSendto refuses MSG_FASTOPEN (see checkSendFlags) and, with
// opts.SuperviseSockets, hands a sendto with a destination address (arg4
// not NULL, all 64 bits of the pointer compared) to the supervisor; the
// plain send of a connected socket, the common case, stays in the kernel.
func checkSendto(a *asm, opts Options) {
	a.load(argLow(3))
	if !opts.SuperviseSockets {
		a.jump(bpf.JumpBitsSet, msgFastopen, toEPERM, toAllow)
		return
	}
	a.jump(bpf.JumpBitsSet, msgFastopen, toEPERM, "")
	a.load(argLow(4))
	a.jump(bpf.JumpEqual, 0, "", toNotify)
	a.load(argHigh(4))
	a.jump(bpf.JumpEqual, 0, toAllow, toNotify)
}

// checkSetsockopt refuses TCP_FASTOPEN_CONNECT at level IPPROTO_TCP (which
// is also SOL_TCP), for the same reason as checkSendFlags.
func checkSetsockopt(a *asm, _ Options) {
	a.load(argLow(1))
	a.jump(bpf.JumpEqual, ipprotoTCP, "", toAllow)
	a.load(argLow(2))
	a.jump(bpf.JumpEqual, tcpFastopenConnect, toEPERM, toAllow)
}

// checkPersonality allows querying the execution domain and the common
// Linux personalities, and refuses the rest, such as ADDR_NO_RANDOMIZE,
// which would switch off address-space randomisation for what runs next.
func checkPersonality(a *asm, _ Options) {
	a.load(argLow(0))
	for _, p := range []uint32{perQuery, perLinux, perLinux32, perUname26} {
		a.jump(bpf.JumpEqual, p, toAllow, "")
	}
	a.jump(bpf.JumpEqual, perUname26|perLinux32, toAllow, toEPERM)
}

// checkAccessExec hands an access check whose mode (argument arg) asks
// about execution (X_OK) to the supervisor, which only observes it; any
// other mode stays in the kernel.
func checkAccessExec(arg int) func(a *asm, opts Options) {
	return func(a *asm, _ Options) {
		a.load(argLow(arg))
		a.jump(bpf.JumpBitsSet, xOK, toNotify, toAllow)
	}
}
