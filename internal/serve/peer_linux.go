package serve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Linux constants newer than some x/sys releases.
const (
	soPeerPIDFD           = 77     // SO_PEERPIDFD, Linux 6.5
	pidfdGetUserNamespace = 0xff09 // PIDFD_GET_USER_NAMESPACE, _IO(0xFF, 9), Linux 6.11
)

// checkPeer passes a Unix-socket peer whose uid is ours and whose user
// namespace is ours, read race-safely: the peer's pidfd (SO_PEERPIDFD, or
// pidfd_open of SO_PEERCRED's pid on older kernels), its user namespace
// through the pidfd (PIDFD_GET_USER_NAMESPACE) or /proc/<pid>/ns/user,
// then the pidfd still naming a live process, so that a recycled pid
// cannot lend its namespace. Anything unreadable refuses.
func checkPeer(c net.Conn) (connKind, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return kindTCP, fmt.Errorf("%w: not a Unix socket", errPeer)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return kindTCP, err
	}
	var cred *unix.Ucred
	pidfd := -1
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if cerr != nil {
			return
		}
		if v, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, soPeerPIDFD); err == nil {
			pidfd = v
		}
	}); err != nil {
		return kindTCP, err
	}
	if cerr != nil {
		return kindTCP, fmt.Errorf("%w: SO_PEERCRED: %v", errPeer, cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return kindTCP, fmt.Errorf("%w: uid %d is not ours", errPeer, cred.Uid)
	}
	if cred.Pid <= 0 {
		return kindTCP, fmt.Errorf("%w: no pid (the peer is in a pid namespace we cannot see)", errPeer)
	}
	if pidfd < 0 {
		if pidfd, err = unix.PidfdOpen(int(cred.Pid), 0); err != nil {
			return kindTCP, fmt.Errorf("%w: pidfd_open(%d): %v", errPeer, cred.Pid, err)
		}
	}
	defer unix.Close(pidfd)
	theirs, err := peerUserNS(pidfd, int(cred.Pid))
	if err != nil {
		return kindTCP, fmt.Errorf("%w: pid %d's user namespace: %v", errPeer, cred.Pid, err)
	}
	if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil {
		return kindTCP, fmt.Errorf("%w: pid %d is gone: %v", errPeer, cred.Pid, err)
	}
	ours, err := selfUserNS()
	if err != nil {
		return kindTCP, fmt.Errorf("%w: our user namespace: %v", errPeer, err)
	}
	if theirs != ours {
		return kindTCP, fmt.Errorf("%w: pid %d is in another user namespace (a sandbox)", errPeer, cred.Pid)
	}
	return kindUnixVerified, nil
}

type nsID struct{ dev, ino uint64 }

func peerUserNS(pidfd, pid int) (nsID, error) {
	if nsfd, err := unix.IoctlRetInt(pidfd, pidfdGetUserNamespace); err == nil {
		defer unix.Close(nsfd)
		var st unix.Stat_t
		if err := unix.Fstat(nsfd, &st); err != nil {
			return nsID{}, err
		}
		return nsID{st.Dev, st.Ino}, nil
	} else if !errors.Is(err, unix.ENOTTY) && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EOPNOTSUPP) {
		return nsID{}, err
	}
	return statNS("/proc/" + strconv.Itoa(pid) + "/ns/user")
}

func selfUserNS() (nsID, error) { return statNS("/proc/self/ns/user") }

func statNS(p string) (nsID, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return nsID{}, err
	}
	return nsID{st.Dev, st.Ino}, nil
}

// peerPID is the pid of c's peer, 0 when unknown.
func peerPID(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}
