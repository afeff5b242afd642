package ipc

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// peerRoot is the process at the other end of a Unix connection, held by
// its /proc directory from the moment the connection is served: once it
// exits, opening through it fails, even if its PID is reused.
type peerRoot struct {
	proc int // O_PATH descriptor of /proc/PID
}

// peerOf returns the connection's peer, or nil when conn is not a Unix
// socket or its peer cannot be held.
func peerOf(conn net.Conn) callerDirOpener {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cerr != nil || cred == nil || cred.Pid <= 0 {
		return nil
	}
	proc, err := unix.Open(fmt.Sprintf("/proc/%d", cred.Pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return &peerRoot{proc: proc}
}

// openDir opens dir, an absolute path as the peer sees it, beneath the
// peer's root directory: no component may be a symbolic link or a magic
// link, and none may climb out of the root. The result is a read-only
// directory descriptor.
func (p *peerRoot) openDir(dir string) (*os.File, error) {
	rel, err := checkCallerDir(dir)
	if err != nil {
		return nil, err
	}
	// The peer's root is itself a magic link, followed here on purpose:
	// it is the sandbox's view.
	root, err := unix.Openat(p.proc, "root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the caller's root: %w", err)
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir), nil
}

func (p *peerRoot) close() { unix.Close(p.proc) }
