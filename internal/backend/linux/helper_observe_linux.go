package linux

import (
	"bytes"
	"fmt"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The supervisor also watches two kinds of call that the sandbox would
// otherwise fail at without moat hearing of it, so that each refusal can
// be named with what allows it:
//
//   - execve and execveat, and access checks for execution (X_OK), which
//     make and other tools ask before they exec. The supervisor decides nothing: Landlock and the
//     noexec mounts do, in the kernel, which carries on with every exec
//     (SECCOMP_USER_NOTIF_FLAG_CONTINUE). It only looks, before letting
//     it go on, at the file the caller names, resolved as the caller
//     would, and records it when the kernel will refuse it for
//     write-xor-execute: an executable regular file on a writable noexec
//     mount, which in a sandbox with a mount namespace is exactly a place
//     the sandbox writes and may not run (bindFlags). A missing file, a
//     file without an execute bit, a read-only noexec place (shared temp)
//     are other failures and are not recorded. As nothing is decided, the
//     caller changing its memory or files meanwhile only changes what is
//     reported.
//   - socket and socketpair calls the filter refuses (UDP, raw, netlink,
//     packet, vsock, MPTCP): rare, so the filter hands them here
//     (NotifyRefusedSockets), and the supervisor records the family and
//     type and fails the call with EPERM, as the filter would.
//
// Both are answered at once on serve's thread: nothing is copied but the
// path (at most PATH_MAX bytes), no descriptor is kept, and the record is
// bounded (helper_refusals_linux.go).

// observe answers n when it is an exec or a refused socket call, and
// reports whether it did.
func (g *sockGuard) observe(listener int, n *seccompNotif) bool {
	switch uintptr(n.Nr) {
	case unix.SYS_EXECVE, unix.SYS_EXECVEAT, unix.SYS_FACCESSAT, unix.SYS_FACCESSAT2, sysAccess:
		if path := g.execRefused(listener, n); path != "" {
			g.refuse(refusedCall{Kind: refusedExec, Subject: path})
		}
		answer(listener, n.ID, 0, 0, unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE)
		return true
	case unix.SYS_SOCKET, unix.SYS_SOCKETPAIR:
		subject, detail := describeSocket(uintptr(n.Nr) == unix.SYS_SOCKETPAIR, int32(n.Args[0]), int32(n.Args[1]), int32(n.Args[2]), g.inetTCP)
		g.refuseClass(refusedCall{Kind: refusedSocket, Subject: subject, Detail: detail}, socketClass(int32(n.Args[0]), int32(n.Args[1])))
		answer(listener, n.ID, 0, unix.EPERM, 0)
		return true
	}
	return false
}

// answer sends the answer to notification id.
func answer(listener int, id uint64, val int64, errno unix.Errno, flags uint32) {
	r := seccompResp{ID: id, Val: val, Flags: flags}
	if errno != 0 {
		r.Val, r.Error = 0, -int32(errno)
	}
	// ENOENT: the caller was killed meanwhile; nothing to answer.
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&r)))
}

// execRefused returns the file an exec (or an X_OK check) names, resolved, when
// write-xor-execute will make the kernel refuse it; "" otherwise.
func (g *sockGuard) execRefused(listener int, n *seccompNotif) string {
	tid := strconv.Itoa(int(n.Pid))
	pathArg, dirArg, flags := n.Args[0], int32(unix.AT_FDCWD), uint64(0)
	switch uintptr(n.Nr) {
	case unix.SYS_EXECVEAT:
		dirArg, pathArg, flags = int32(n.Args[0]), n.Args[1], n.Args[4]
	case unix.SYS_FACCESSAT:
		dirArg, pathArg = int32(n.Args[0]), n.Args[1]
	case unix.SYS_FACCESSAT2:
		dirArg, pathArg, flags = int32(n.Args[0]), n.Args[1], n.Args[3]
	}
	path, ok := readCString(int(n.Pid), pathArg, unix.PathMax)
	if !ok || !idValid(listener, n.ID) {
		return "" // unreadable, or read from a task that is gone
	}
	if path == "" && flags&unix.AT_EMPTY_PATH == 0 {
		return "" // ENOENT
	}
	dir := unix.AT_FDCWD // an absolute path: the caller's root is ours
	if path == "" || path[0] != '/' {
		// Relative to the caller's working directory or dirfd, or the
		// dirfd itself (AT_EMPTY_PATH, as fexecve uses it).
		rel := tid + "/cwd"
		if dirArg != unix.AT_FDCWD {
			rel = tid + "/fd/" + strconv.Itoa(int(dirArg))
		}
		fd, err := unix.Openat(g.proc, rel, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return ""
		}
		defer unix.Close(fd)
		if !idValid(listener, n.ID) {
			return "" // the pid may name another task by now
		}
		dir = fd
	}
	oflags := unix.O_PATH | unix.O_CLOEXEC
	if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
		oflags |= unix.O_NOFOLLOW // the kernel then fails a link with ELOOP
	}
	fd := dir
	if path != "" {
		var err error
		if fd, err = unix.Openat(dir, path, oflags, 0); err != nil {
			return "" // ENOENT, ELOOP and the like: not write-xor-execute
		}
		defer unix.Close(fd)
	}
	if !wxRefuses(fd) {
		return ""
	}
	buf := make([]byte, unix.PathMax)
	l, err := unix.Readlinkat(g.selfFD, strconv.Itoa(fd), buf)
	if err != nil {
		return ""
	}
	return string(buf[:l])
}

// wxRefuses reports whether the kernel refuses to execute the file open
// (O_PATH) as fd for write-xor-execute alone: an executable regular file
// on a writable noexec mount.
func wxRefuses(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 {
		return false
	}
	var sfs unix.Statfs_t
	if unix.Fstatfs(fd, &sfs) != nil {
		return false
	}
	return sfs.Flags&unix.ST_NOEXEC != 0 && sfs.Flags&unix.ST_RDONLY == 0
}

// readCString copies the NUL-terminated string at addr of task tid, at
// most max bytes before the NUL; ok is false when it is unreadable or
// longer (the kernel fails such an exec with EFAULT or ENAMETOOLONG). It
// reads a page at a time, so a string that ends just before an unmapped
// page is read whole.
func readCString(tid int, addr uint64, max int) (string, bool) {
	if addr == 0 {
		return "", false
	}
	const page = 4096
	var out []byte
	for len(out) <= max {
		n := page - int(addr%page)
		buf := make([]byte, n)
		got, err := unix.ProcessVMReadv(tid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}},
			[]unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
		if err != nil || got <= 0 {
			return "", false
		}
		buf = buf[:got]
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			out = append(out, buf[:i]...)
			if len(out) > max {
				return "", false
			}
			return string(out), true
		}
		out = append(out, buf...)
		addr += uint64(got)
	}
	return "", false
}

// describeSocket names a refused socket (or socketpair) call by its
// family and type, and says why the sandbox may not open it. inetTCP is
// whether the filter allows TCP.
func describeSocket(pair bool, domain, typ, proto int32, inetTCP bool) (subject, detail string) {
	t := typ & 0xf // SOCK_TYPE_MASK: SOCK_NONBLOCK and SOCK_CLOEXEC aside
	fam, ok := socketFamilies[domain]
	if !ok {
		fam = "family " + strconv.Itoa(int(domain))
	}
	tn, ok := socketTypes[t]
	if !ok {
		tn = "type " + strconv.Itoa(int(t))
	}
	what := "socket"
	inet := domain == unix.AF_INET || domain == unix.AF_INET6
	switch {
	case pair:
		what = "socketpair"
	case inet && t == unix.SOCK_DGRAM:
		what = "udp socket"
	case inet && t == unix.SOCK_STREAM && proto == unix.IPPROTO_MPTCP:
		what = "mptcp socket"
	case t == unix.SOCK_RAW:
		what = "raw socket"
	}
	args := fam + ", " + tn
	if proto != 0 {
		args += ", protocol " + strconv.Itoa(int(proto))
	}
	subject = fmt.Sprintf("%s (%s)", what, args)
	allowed := "Unix sockets"
	if inetTCP {
		allowed = "Unix sockets and plain TCP"
	}
	detail = "the sandbox may open only " + allowed
	if inet && t == unix.SOCK_DGRAM {
		detail += "; DNS goes to moat's resolver over TCP, and no other UDP leaves the sandbox"
	}
	return subject, detail
}

// socketFamilies and socketTypes name the usual address families and
// socket types.
var (
	socketFamilies = map[int32]string{
		unix.AF_UNIX: "AF_UNIX", unix.AF_INET: "AF_INET", unix.AF_INET6: "AF_INET6",
		unix.AF_NETLINK: "AF_NETLINK", unix.AF_PACKET: "AF_PACKET", unix.AF_VSOCK: "AF_VSOCK",
		unix.AF_BLUETOOTH: "AF_BLUETOOTH", unix.AF_ALG: "AF_ALG", unix.AF_KEY: "AF_KEY",
		unix.AF_XDP: "AF_XDP", unix.AF_CAN: "AF_CAN", unix.AF_TIPC: "AF_TIPC", unix.AF_RDS: "AF_RDS",
		unix.AF_APPLETALK: "AF_APPLETALK", unix.AF_X25: "AF_X25", unix.AF_AX25: "AF_AX25",
		unix.AF_NFC: "AF_NFC", unix.AF_QIPCRTR: "AF_QIPCRTR", unix.AF_SMC: "AF_SMC",
	}
	socketTypes = map[int32]string{
		unix.SOCK_STREAM: "SOCK_STREAM", unix.SOCK_DGRAM: "SOCK_DGRAM", unix.SOCK_RAW: "SOCK_RAW",
		unix.SOCK_RDM: "SOCK_RDM", unix.SOCK_SEQPACKET: "SOCK_SEQPACKET", unix.SOCK_PACKET: "SOCK_PACKET",
	}
)
