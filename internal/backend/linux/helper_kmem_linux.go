package linux

import (
	"bytes"
	"encoding/binary"
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

func readSysvipc(kind string) (sysvTable, error) {
	b, err := os.ReadFile("/proc/sysvipc/" + kind)
	if err != nil {
		return sysvTable{}, err
	}
	return parseSysvipc(b), nil
}

// msgHeaderBytes is what the kernel allocates for each queued message
// besides its text (struct msg_msg, 48 bytes, in a 64-byte slab object).
// A queue holds at most msgmnb messages as well as msgmnb bytes, so
// one-byte messages would otherwise pin some 64 times what cbytes says.
const msgHeaderBytes = 64

// sysvBytes is what the SysV objects of this IPC namespace hold: segments'
// resident and swapped pages, queued messages, and semaphores. A table
// that cannot be read is an error, not a zero.
func sysvBytes() (shm, msg, sem int64, err error) {
	t, err := readSysvipc("shm")
	if err != nil {
		return 0, 0, 0, err
	}
	m, err := readSysvipc("msg")
	if err != nil {
		return 0, 0, 0, err
	}
	sm, err := readSysvipc("sem")
	if err != nil {
		return 0, 0, 0, err
	}
	shm = t.sum("rss", 1) + t.sum("swap", 1)
	msg = m.sum("cbytes", 1) + m.sum("qnum", msgHeaderBytes)
	sem = sm.sum("nsems", semBytes)
	return shm, msg, sem, nil
}

// removeSysV removes every SysV object of this IPC namespace, which
// outlive the processes that made them. The caller owns them (same user).
func removeSysV() {
	shm, _ := readSysvipc("shm")
	msg, _ := readSysvipc("msg")
	sem, _ := readSysvipc("sem")
	for _, id := range shm.ids("shmid") {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	}
	for _, id := range msg.ids("msqid") {
		_, _, _ = unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0)
	}
	for _, id := range sem.ids("semid") {
		_, _, _ = unix.Syscall6(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0)
	}
}

// tmpfsUsed is the space used on the file system of the open directory fd.
func tmpfsUsed(fd int) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return 0, err
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize), nil
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
// send, forward-allocated, option memory and the backlog. A family whose
// dump fails does not stop the others from being counted; the first error
// is returned with what was counted.
//
// Each TCP dump walks the kernel's whole established-connection hash
// table, which every network namespace shares unless
// net.ipv4.tcp_child_ehash_entries gave it its own: this is most of the
// memory watch's cost per tick. ownTCP4 are the IPv4 TCP sockets of the
// namespace that are moat's own listeners (the DNS stub, the proxy): while
// the namespace has no TCP socket besides them, nothing is dumped. proc is
// a /proc in which the calling thread exists (the zygote's is the host's,
// held from before the pivot: the sandbox's /proc does not show it).
func socketBytes(ownTCP4, proc int) (int64, error) {
	unixReq := make([]byte, 24) // struct unix_diag_req
	unixReq[0] = unix.AF_UNIX
	binary.NativeEndian.PutUint32(unixReq[4:], 0xffffffff) // every state
	binary.NativeEndian.PutUint32(unixReq[12:], udiagShowMeminfo)
	total, first := sockDiag(unixReq, unixDiagMsgSize, unixDiagMeminfo)
	for _, family := range []byte{unix.AF_INET, unix.AF_INET6} {
		// An inet_diag dump walks the host's whole connection table
		// (about 3 ms here, every tick; 43% of two cores with ten idle
		// sandboxes when the DNS stub's listener alone made every
		// sandbox dump): skip it while this network namespace has no
		// TCP socket of the family but moat's listeners. A socket that
		// holds memory is counted in use until it is closed.
		own := 0
		if family == unix.AF_INET {
			own = ownTCP4
		}
		if n := tcpInUse(proc, family); n >= 0 && n <= own {
			continue
		}
		req := make([]byte, 56) // struct inet_diag_req_v2
		req[0], req[1], req[2] = family, unix.IPPROTO_TCP, 1<<(inetDiagSkmem-1)
		binary.NativeEndian.PutUint32(req[4:], 0xffffffff)
		n, err := sockDiag(req, inetDiagMsgSize, inetDiagSkmem)
		total += n
		if first == nil {
			first = err
		}
	}
	return total, first
}

// sockDiag sends one dump request and sums the memory information
// attribute attr of every answer (helper_sockdiag_linux.go reads the dump).
func sockDiag(req []byte, msgLen int, attr uint16) (total int64, err error) {
	err = sockDiagDump(req, meminfoOf(msgLen, attr, &total))
	return total, err
}

// parseDiag sums the meminfo attribute attr over one batch b of a dump,
// each message a diag message of msgLen bytes followed by attributes.
// done is true at the dump's end.
func parseDiag(b []byte, msgLen int, attr uint16) (total int64, done bool, err error) {
	done, err = parseSockDiag(b, meminfoOf(msgLen, attr, &total))
	return total, done, err
}

// meminfoOf returns a sock_diag message handler that adds the memory of
// each message's attribute attr to total.
func meminfoOf(msgLen int, attr uint16, total *int64) func([]byte) error {
	return func(msg []byte) error {
		if len(msg) >= msgLen {
			*total += meminfoAttr(msg[msgLen:], attr)
		}
		return nil
	}
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
// helper is what the zygote holds for the sandbox's pending supervised
// calls.
type memoryUse struct {
	resident, sysvShm, sysvMsg, sysvSem, posixShm, sockets, helper int64
}

func (u memoryUse) total() int64 {
	return u.resident + u.sysvShm + u.sysvMsg + u.sysvSem + u.posixShm + u.sockets + u.helper
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
		{"held by moat for pending socket calls", u.helper},
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

// tcpInUse returns how many TCP sockets of family the calling thread's
// network namespace has in use, from /proc/thread-self/net/sockstat(6);
// -1 when that cannot be read, so that the caller counts anyway.
func tcpInUse(proc int, family byte) int {
	file, label := "thread-self/net/sockstat", "TCP:"
	if family == unix.AF_INET6 {
		file, label = "thread-self/net/sockstat6", "TCP6:"
	}
	fd, err := unix.Openat(proc, file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	defer unix.Close(fd)
	b := make([]byte, 512)
	n, err := unix.Read(fd, b)
	if err != nil || n <= 0 {
		return -1
	}
	return parseInUse(b[:n], label)
}

// parseInUse reads "LABEL inuse N ..." from a sockstat file; -1 when the
// line or its number is missing.
func parseInUse(b []byte, label string) int {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == label && f[1] == "inuse" {
			if n, err := strconv.Atoi(f[2]); err == nil && n >= 0 {
				return n
			}
		}
	}
	return -1
}
