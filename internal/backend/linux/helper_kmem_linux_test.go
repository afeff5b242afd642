package linux

import (
	"encoding/binary"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseSysvipc(t *testing.T) {
	shm := `       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap
         0          3   600              16777216  1234  1234      0  1001  1001  1001  1001 1700000000 1700000001 1700000000              16777216                     0
         0          4   600               1048576  1234     0      0  1001  1001  1001  1001          0          0 1700000000                  4096                  8192
`
	msg := `       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      stime      rtime      ctime
         0          0   600       16000          2  1234     0  1001  1001  1001  1001 1700000000          0 1700000000
`
	sem := `       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime
         0          0   600        250  1001  1001  1001  1001          0 1700000000
         0          1   600         10  1001  1001  1001  1001          0 1700000000
`
	cases := []struct {
		name, text, col string
		mult            int64
		want            int64
		idcol           string
		ids             int
	}{
		{"shm rss", shm, "rss", 1, 16777216 + 4096, "shmid", 2},
		{"shm swap", shm, "swap", 1, 8192, "shmid", 2},
		{"msg cbytes", msg, "cbytes", 1, 16000, "msqid", 1},
		{"sem nsems", sem, "nsems", semBytes, 260 * semBytes, "semid", 2},
		{"empty", "", "rss", 1, 0, "shmid", 0},
		{"header only", strings.SplitN(shm, "\n", 2)[0] + "\n", "rss", 1, 0, "shmid", 0},
		{"missing column", msg, "rss", 1, 0, "nosuch", 0},
		{"short row", "a b c\n1 2\n", "c", 1, 0, "a", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tab := parseSysvipc([]byte(tc.text))
			if got := tab.sum(tc.col, tc.mult); got != tc.want {
				t.Errorf("sum(%s) = %d, want %d", tc.col, got, tc.want)
			}
			if got := len(tab.ids(tc.idcol)); got != tc.ids {
				t.Errorf("ids(%s) = %d, want %d", tc.idcol, got, tc.ids)
			}
		})
	}
}

func FuzzParseSysvipc(f *testing.F) {
	f.Add([]byte("key shmid rss\n0 1 4096\n"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte("a\n-5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tab := parseSysvipc(b)
		for _, c := range tab.cols {
			if tab.sum(c, 1) < 0 {
				t.Fatalf("negative sum for %q", c)
			}
			_ = tab.ids(c)
		}
	})
}

// diagMessage builds one netlink message of type typ: a diag header of
// msgLen zero bytes and a meminfo attribute attr holding vals.
func diagMessage(typ uint16, msgLen int, attr uint16, vals []uint32) []byte {
	body := make([]byte, msgLen)
	if vals != nil {
		a := make([]byte, 4+4*len(vals))
		binary.NativeEndian.PutUint16(a[0:], uint16(len(a)))
		binary.NativeEndian.PutUint16(a[2:], attr)
		for i, v := range vals {
			binary.NativeEndian.PutUint32(a[4+4*i:], v)
		}
		body = append(body, a...)
	}
	m := make([]byte, nlmsgHdrSize, nlmsgHdrSize+len(body))
	m = append(m, body...)
	binary.NativeEndian.PutUint32(m[0:], uint32(len(m)))
	binary.NativeEndian.PutUint16(m[4:], typ)
	for len(m)%4 != 0 {
		m = append(m, 0)
	}
	return m
}

func TestParseDiag(t *testing.T) {
	// rmem, rcvbuf, wmem, sndbuf, fwd, queued, optmem, backlog, drops
	full := []uint32{100, 9999, 200, 9999, 10, 20, 5, 1, 7777}
	done := diagMessage(unix.NLMSG_DONE, 4, 0, nil)
	cases := []struct {
		name     string
		b        []byte
		want     int64
		done, ok bool
	}{
		{"one unix socket", diagMessage(unix.SOCK_DIAG_BY_FAMILY, unixDiagMsgSize, unixDiagMeminfo, full), 336, false, true},
		{"two and done", append(append(diagMessage(20, inetDiagMsgSize, inetDiagSkmem, full),
			diagMessage(20, inetDiagMsgSize, inetDiagSkmem, full)...), done...), 672, true, true},
		{"other attribute", diagMessage(20, unixDiagMsgSize, unixDiagMeminfo+1, full), 0, false, true},
		{"short meminfo", diagMessage(20, unixDiagMsgSize, unixDiagMeminfo, []uint32{100, 1, 200}), 300, false, true},
		{"done", done, 0, true, true},
		{"truncated", diagMessage(20, unixDiagMsgSize, unixDiagMeminfo, full)[:20], 0, false, false},
		{"empty", nil, 0, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attr := uint16(unixDiagMeminfo)
			msgLen := unixDiagMsgSize
			if strings.HasPrefix(tc.name, "two") {
				attr, msgLen = inetDiagSkmem, inetDiagMsgSize
			}
			got, done, err := parseDiag(tc.b, msgLen, attr)
			if got != tc.want || done != tc.done || (err == nil) != tc.ok {
				t.Fatalf("parseDiag = %d, %v, %v; want %d, %v, ok=%v", got, done, err, tc.want, tc.done, tc.ok)
			}
		})
	}
}

func FuzzParseDiag(f *testing.F) {
	f.Add(diagMessage(20, unixDiagMsgSize, unixDiagMeminfo, []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9}))
	f.Add([]byte{})
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = parseDiag(b, unixDiagMsgSize, unixDiagMeminfo)
		_, _, _ = parseDiag(b, inetDiagMsgSize, inetDiagSkmem)
	})
}

func TestIPCLimits(t *testing.T) {
	const page = 4096
	cases := []struct {
		name string
		m    int64
		want map[string]string
	}{
		{"200M", 200 << 20, map[string]string{"kernel/shmmax": "209715200", "kernel/shmall": "51200", "kernel/shm_rmid_forced": "1",
			"kernel/msgmnb": "16384", "kernel/msgmni": "1600", "kernel/sem": "32000 409600 500 32000"}},
		{"tiny", 4096, map[string]string{"kernel/shmall": "1", "kernel/msgmnb": "512", "kernel/msgmax": "512", "kernel/msgmni": "1", "kernel/sem": "8 8 500 8"}},
		{"huge", 1 << 50, map[string]string{"kernel/msgmni": "32000", "kernel/sem": "32000 1024000000 500 32000"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, l := range ipcLimits(tc.m, page) {
				got[l.file] = l.value
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestMemoryUseString(t *testing.T) {
	u := memoryUse{resident: 10 << 20, sysvShm: 3 << 29, sockets: 2048}
	if got, want := u.String(), "resident 10 MiB, SysV shared memory 1.5 GiB, socket buffers 2 KiB"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if u.total() != 10<<20+3<<29+2048 {
		t.Fatalf("total() = %d", u.total())
	}
}

func TestParseInUse(t *testing.T) {
	for _, tc := range []struct {
		in, label string
		want      int
	}{
		{"sockets: used 5\nTCP: inuse 3 orphan 0 tw 0 alloc 4 mem 1\nUDP: inuse 0 mem 0\n", "TCP:", 3},
		{"TCP6: inuse 0\nUDP6: inuse 2\n", "TCP6:", 0},
		{"TCP: inuse 0\n", "TCP6:", -1},
		{"TCP: inuse x\n", "TCP:", -1},
		{"TCP: inuse -1\n", "TCP:", -1},
		{"", "TCP:", -1},
	} {
		if got := parseInUse([]byte(tc.in), tc.label); got != tc.want {
			t.Errorf("parseInUse(%q, %q) = %d, want %d", tc.in, tc.label, got, tc.want)
		}
	}
}

func FuzzParseInUse(f *testing.F) {
	f.Add([]byte("TCP: inuse 3 orphan 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := parseInUse(b, "TCP:"); n < -1 {
			t.Fatalf("parseInUse = %d", n)
		}
	})
}
