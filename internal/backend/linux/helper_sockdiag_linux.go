package linux

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Unix socket diagnostics (NETLINK_SOCK_DIAG, include/uapi/linux/unix_diag.h).
// A dump lists the Unix sockets of the network namespace the netlink socket
// was created in; UDIAG_SHOW_VFS adds, for each socket bound to a path, the
// device and inode of the socket file.
const (
	udiagShowVFS = 0x00000002
	unixDiagVFS  = 1
	// unixDiagMsgLen is sizeof(struct unix_diag_msg): family, type, state,
	// pad (one byte each), ino (u32), cookie (2 x u32).
	unixDiagMsgLen = 16
)

// unixDiagReq is struct unix_diag_req.
type unixDiagReq struct {
	Family   uint8
	Protocol uint8
	Pad      uint16
	States   uint32
	Ino      uint32
	Show     uint32
	Cookie   [2]uint32
}

// vfsID is the identity sock_diag gives a socket file: the kernel's dev_t
// of its file system (major in the high 12 bits, minor in the low 20) and
// the low 32 bits of its inode number.
type vfsID struct{ dev, ino uint32 }

// vfsIDOf converts what fstat says of a socket file to a vfsID.
func vfsIDOf(st *unix.Stat_t) vfsID {
	return vfsID{dev: unix.Major(uint64(st.Dev))<<20 | unix.Minor(uint64(st.Dev))&0xfffff, ino: uint32(st.Ino)}
}

// boundUnixSockets dumps the Unix sockets of the calling thread's network
// namespace and returns the socket files they are bound to.
func boundUnixSockets() (map[vfsID]bool, error) {
	req := unixDiagReq{Family: unix.AF_UNIX, States: ^uint32(0), Show: udiagShowVFS}
	out := map[vfsID]bool{}
	if err := sockDiagDump((*[unsafe.Sizeof(req)]byte)(unsafe.Pointer(&req))[:], unixDiagVFSOf(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// parseUnixDiag adds the socket files of one batch of a unix_diag dump to
// out, and says whether the dump is complete.
func parseUnixDiag(b []byte, out map[vfsID]bool) (done bool, err error) {
	return parseSockDiag(b, unixDiagVFSOf(out))
}

// unixDiagVFSOf returns what records, for each unix_diag_msg of a dump,
// the socket file it is bound to in out.
func unixDiagVFSOf(out map[vfsID]bool) func(msg []byte) error {
	return func(msg []byte) error {
		if len(msg) < unixDiagMsgLen {
			return fmt.Errorf("sock_diag: short unix_diag_msg")
		}
		attrs := msg[unixDiagMsgLen:]
		for len(attrs) >= 4 {
			alen := int(binary.NativeEndian.Uint16(attrs[0:2]))
			atyp := binary.NativeEndian.Uint16(attrs[2:4])
			if alen < 4 || alen > len(attrs) {
				return fmt.Errorf("sock_diag: malformed attribute")
			}
			if atyp == unixDiagVFS && alen >= 12 {
				out[vfsID{ino: binary.NativeEndian.Uint32(attrs[4:8]), dev: binary.NativeEndian.Uint32(attrs[8:12])}] = true
			}
			attrs = attrs[min((alen+3)&^3, len(attrs)):]
		}
		return nil
	}
}

// sockDiagDump is the one NETLINK_SOCK_DIAG client of this package (the
// socket guard's unix_diag and the memory report's unix and inet dumps).
// It sends a SOCK_DIAG_BY_FAMILY dump request whose body is req (a
// unix_diag_req or inet_diag_req_v2) in the calling thread's network
// namespace, and hands the body of every answer (a unix_diag_msg or
// inet_diag_msg and its attributes) to each; an error of each ends the dump.
func sockDiagDump(req []byte, each func(msg []byte) error) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)
	msg := make([]byte, unix.NLMSG_HDRLEN+len(req))
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(msg[8:], 1) // sequence number
	copy(msg[unix.NLMSG_HDRLEN:], req)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("sock_diag: send: %w", err)
	}
	buf := make([]byte, 64<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("sock_diag: receive: %w", err)
		}
		done, err := parseSockDiag(buf[:n], each)
		if err != nil || done {
			return err
		}
	}
}

// parseSockDiag hands the body of every SOCK_DIAG_BY_FAMILY message in one
// batch b of a dump to each, and says whether the dump is complete
// (NLMSG_DONE, or NLMSG_ERROR: then with the kernel's error).
func parseSockDiag(b []byte, each func(msg []byte) error) (done bool, err error) {
	for len(b) >= unix.NLMSG_HDRLEN {
		l := binary.NativeEndian.Uint32(b[0:4])
		typ := binary.NativeEndian.Uint16(b[4:6])
		if l < unix.NLMSG_HDRLEN || uint64(l) > uint64(len(b)) {
			return false, fmt.Errorf("sock_diag: malformed message of %d bytes", l)
		}
		msg := b[unix.NLMSG_HDRLEN:l]
		switch typ {
		case unix.NLMSG_DONE:
			return true, nil
		case unix.NLMSG_ERROR:
			if len(msg) >= 4 {
				if e := int32(binary.NativeEndian.Uint32(msg[0:4])); e != 0 {
					return true, fmt.Errorf("sock_diag: %w", unix.Errno(-e))
				}
			}
			return true, nil
		case unix.SOCK_DIAG_BY_FAMILY:
			if err := each(msg); err != nil {
				return false, err
			}
		}
		b = b[min(int((l+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1)), len(b)):]
	}
	return false, nil
}
