package linux

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Memory the kernel holds for the sandbox outside any process's RSS, as the
// sandbox's init sees it from inside the sandbox's IPC and network
// namespaces: SysV shared memory, message queues and semaphores
// (/proc/sysvipc), POSIX shared memory (the sandbox's /dev/shm tmpfs) and
// socket buffers (NETLINK_SOCK_DIAG with memory information, for every
// Unix and TCP socket of the sandbox's network namespace). Pipe buffers,
// the page cache of written files and kernel objects such as inodes are
// not exposed per namespace and are not counted.

// sysvTable is one /proc/sysvipc file: its header's column names, then
// one row of numbers per object.
type sysvTable struct {
	cols []string
	rows [][]int64
}

// parseSysvipc parses a /proc/sysvipc/{shm,msg,sem} file. Fields that are
// not numbers are read as 0; rows with fewer fields than the header are
// skipped.
func parseSysvipc(b []byte) sysvTable {
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) == 0 {
		return sysvTable{}
	}
	var t sysvTable
	for _, f := range bytes.Fields(lines[0]) {
		t.cols = append(t.cols, string(f))
	}
	for _, line := range lines[1:] {
		f := bytes.Fields(line)
		if len(f) == 0 || len(f) < len(t.cols) {
			continue
		}
		row := make([]int64, len(t.cols))
		for i := range t.cols {
			row[i], _ = strconv.ParseInt(string(f[i]), 10, 64)
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// col returns the index of column name, or -1.
func (t sysvTable) col(name string) int {
	for i, c := range t.cols {
		if c == name {
			return i
		}
	}
	return -1
}

// sum adds column name (times mult) over every row; a missing column adds 0.
func (t sysvTable) sum(name string, mult int64) int64 {
	i := t.col(name)
	if i < 0 {
		return 0
	}
	var n int64
	for _, r := range t.rows {
		if r[i] > 0 {
			n += r[i] * mult
		}
	}
	return n
}

// ids lists the identifiers (column idcol) of every row.
func (t sysvTable) ids(idcol string) []int {
	i := t.col(idcol)
	if i < 0 {
		return nil
	}
	out := make([]int, 0, len(t.rows))
	for _, r := range t.rows {
		out = append(out, int(r[i]))
	}
	return out
}

func readSysvipc(kind string) sysvTable {
	b, err := os.ReadFile("/proc/sysvipc/" + kind)
	if err != nil {
		return sysvTable{}
	}
	return parseSysvipc(b)
}

// sysvBytes is what the SysV objects of this IPC namespace hold: segments'
// resident and swapped pages, queued message bytes, and semaphores.
func sysvBytes() (shm, msg, sem int64) {
	t := readSysvipc("shm")
	shm = t.sum("rss", 1) + t.sum("swap", 1)
	msg = readSysvipc("msg").sum("cbytes", 1)
	sem = readSysvipc("sem").sum("nsems", semBytes)
	return shm, msg, sem
}

// removeSysV removes every SysV object of this IPC namespace, which
// outlive the processes that made them. The caller owns them (same user).
func removeSysV() {
	for _, id := range readSysvipc("shm").ids("shmid") {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	}
	for _, id := range readSysvipc("msg").ids("msqid") {
		_, _, _ = unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0)
	}
	for _, id := range readSysvipc("sem").ids("semid") {
		_, _, _ = unix.Syscall6(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0)
	}
}

// tmpfsUsed is the space used on the file system of the open directory fd.
func tmpfsUsed(fd int) int64 {
	var st unix.Statfs_t
	if unix.Fstatfs(fd, &st) != nil {
		return 0
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize)
}

// Netlink sock_diag, from linux/sock_diag.h, unix_diag.h and inet_diag.h.
const (
	udiagShowMeminfo = 0x20 // UDIAG_SHOW_MEMINFO
	unixDiagMeminfo  = 5    // UNIX_DIAG_MEMINFO
	inetDiagSkmem    = 7    // INET_DIAG_SKMEMINFO
	unixDiagMsgSize  = 16   // struct unix_diag_msg
	inetDiagMsgSize  = 72   // struct inet_diag_msg
	nlmsgHdrSize     = 16
)

// socketBytes adds up the buffer memory of every Unix and TCP socket in
// the calling thread's network namespace: what is queued to receive, to
// send, forward-allocated, option memory and the backlog.
func socketBytes() (int64, error) {
	var total int64
	unixReq := make([]byte, 24) // struct unix_diag_req
	unixReq[0] = unix.AF_UNIX
	binary.NativeEndian.PutUint32(unixReq[4:], 0xffffffff) // every state
	binary.NativeEndian.PutUint32(unixReq[12:], udiagShowMeminfo)
	n, err := sockDiag(unixReq, unixDiagMsgSize, unixDiagMeminfo)
	if err != nil {
		return 0, err
	}
	total += n
	for _, family := range []byte{unix.AF_INET, unix.AF_INET6} {
		req := make([]byte, 56) // struct inet_diag_req_v2
		req[0], req[1], req[2] = family, unix.IPPROTO_TCP, 1<<(inetDiagSkmem-1)
		binary.NativeEndian.PutUint32(req[4:], 0xffffffff)
		n, err := sockDiag(req, inetDiagMsgSize, inetDiagSkmem)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// sockDiag sends one dump request and sums the memory information
// attribute attr of every answer.
func sockDiag(req []byte, msgLen int, attr uint16) (int64, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)
	msg := make([]byte, nlmsgHdrSize+len(req))
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	copy(msg[nlmsgHdrSize:], req)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("sock_diag: %w", err)
	}
	buf := make([]byte, 64<<10)
	var total int64
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, fmt.Errorf("sock_diag: %w", err)
		}
		sum, done, err := parseDiag(buf[:n], msgLen, attr)
		total += sum
		if err != nil || done {
			return total, err
		}
	}
}

// parseDiag sums the meminfo attribute attr over the netlink messages in
// b, each a diag message of msgLen bytes followed by attributes. done is
// true at NLMSG_DONE.
func parseDiag(b []byte, msgLen int, attr uint16) (total int64, done bool, err error) {
	for len(b) >= nlmsgHdrSize {
		l := int(binary.NativeEndian.Uint32(b[0:]))
		typ := binary.NativeEndian.Uint16(b[4:])
		if l < nlmsgHdrSize || l > len(b) {
			return total, false, errors.New("sock_diag: truncated message")
		}
		body := b[nlmsgHdrSize:l]
		switch typ {
		case unix.NLMSG_DONE:
			return total, true, nil
		case unix.NLMSG_ERROR:
			if len(body) >= 4 {
				if e := int32(binary.NativeEndian.Uint32(body)); e != 0 {
					return total, true, fmt.Errorf("sock_diag: %w", unix.Errno(-e))
				}
			}
			return total, true, nil
		}
		if len(body) >= msgLen {
			total += meminfoAttr(body[msgLen:], attr)
		}
		b = b[min(nlAlign(l), len(b)):]
	}
	return total, false, nil
}

// meminfoAttr finds attribute attr, an array of SK_MEMINFO_* counters, in
// the route attributes b and returns the memory it accounts for.
func meminfoAttr(b []byte, attr uint16) int64 {
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b[0:]))
		typ := binary.NativeEndian.Uint16(b[2:])
		if l < 4 || l > len(b) {
			return 0
		}
		if typ == attr {
			v := b[4:l]
			var n int64
			for _, i := range []int{unix.SK_MEMINFO_RMEM_ALLOC, unix.SK_MEMINFO_WMEM_ALLOC, unix.SK_MEMINFO_FWD_ALLOC,
				unix.SK_MEMINFO_WMEM_QUEUED, unix.SK_MEMINFO_OPTMEM, unix.SK_MEMINFO_BACKLOG} {
				if 4*i+4 <= len(v) {
					n += int64(binary.NativeEndian.Uint32(v[4*i:]))
				}
			}
			return n
		}
		b = b[min(nlAlign(l), len(b)):]
	}
	return 0
}

func nlAlign(n int) int { return (n + 3) &^ 3 }

// memoryUse is the memory of a sandbox, by where the kernel keeps it.
type memoryUse struct {
	resident, sysvShm, sysvMsg, sysvSem, posixShm, sockets int64
}

func (u memoryUse) total() int64 {
	return u.resident + u.sysvShm + u.sysvMsg + u.sysvSem + u.posixShm + u.sockets
}

// String lists the parts that are not zero: "resident 10 MiB, SysV shared
// memory 1 GiB".
func (u memoryUse) String() string {
	var parts []string
	for _, p := range []struct {
		name string
		n    int64
	}{
		{"resident", u.resident}, {"SysV shared memory", u.sysvShm}, {"SysV message queues", u.sysvMsg},
		{"SysV semaphores", u.sysvSem}, {"/dev/shm", u.posixShm}, {"socket buffers", u.sockets},
	} {
		if p.n > 0 {
			parts = append(parts, p.name+" "+humanBytes(p.n))
		}
	}
	return strings.Join(parts, ", ")
}

// humanBytes writes n as whole KiB, MiB or GiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
