//go:build linux

package escape_test

// Helpers of the network, kernel-surface, Unix-socket and usability tests:
// loopback listeners the probes try to reach, a Python prelude that prints
// one "name: OK value" or "name: ERRNO n" line per probe, and the parsing of
// those lines.

import (
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// pyPrelude defines, for a Python probe:
//
//	sc(name, nr, *args)  a raw syscall; ints are passed as C longs
//	probe(name, fn)      calls fn; an OSError is printed as its errno
//	forked(name, fn)     runs probe(name, fn) in a child process, for calls
//	                     that change the caller (unshare, PTRACE_TRACEME)
//
// Each prints exactly one line "name: OK value", "name: ERRNO n" or
// "name: EXC type message".
const pyPrelude = `
import ctypes, errno, os, socket, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def _arg(x):
    return ctypes.c_long(x) if isinstance(x, int) else x
def out(name, what):
    sys.stdout.write("%s: %s\n" % (name, what)); sys.stdout.flush()
def sc(name, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[_arg(a) for a in args])
    if r == -1:
        out(name, "ERRNO %d" % ctypes.get_errno())
    else:
        out(name, "OK %d" % r)
    return r
def probe(name, fn):
    try:
        v = fn()
    except OSError as e:
        out(name, "ERRNO %d" % (e.errno if e.errno is not None else -1))
        return None
    except Exception as e:
        out(name, "EXC %s %s" % (type(e).__name__, str(e).replace("\n", " ")))
        return None
    out(name, "OK %s" % (v,))
    return v
def forked(name, fn):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        try:
            probe(name, fn)
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    sys.stdout.write(data.decode()); sys.stdout.flush()
`

var probeLine = regexp.MustCompile(`(?m)^([A-Za-z0-9_.:/+\[\]-]+?): (OK|ERRNO|EXC)\b ?(.*)$`)

// probes parses the "name: VERDICT value" lines of a prelude-based probe.
func probes(r result) map[string]string {
	m := map[string]string{}
	for _, sub := range probeLine.FindAllStringSubmatch(r.Stdout, -1) {
		m[sub[1]] = strings.TrimSpace(sub[2] + " " + sub[3])
	}
	return m
}

// verdict returns the parsed line for name, failing the test when the probe
// printed nothing for it (a probe that did not run proves nothing).
func verdict(t *testing.T, m map[string]string, name string, r result) string {
	t.Helper()
	v, ok := m[name]
	if !ok {
		t.Fatalf("probe %q printed no verdict; output: %s", name, r)
	}
	return v
}

// isOK reports a successful probe line.
func isOK(v string) bool { return strings.HasPrefix(v, "OK") }

// errnoIs reports a probe line that failed with exactly errno n.
func errnoIs(v string, n int) bool { return v == "ERRNO "+strconv.Itoa(n) }

// Errnos the battery compares against.
const (
	ePERM   = 1
	eNOENT  = 2
	eBADF   = 9
	eFAULT  = 14
	eINVAL  = 22
	eNOSYS  = 38
	eCONNRE = 111 // ECONNREFUSED
)

// needX86_64 skips, loudly, probes that use x86-64 syscall numbers.
func needX86_64(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skipf("probe uses x86-64 syscall numbers; this is %s", runtime.GOARCH)
	}
}

// needNamespaces skips, loudly, a check that holds only inside moat's
// namespaces (a private network namespace with its own lo).
func needNamespaces(t *testing.T, sb *moat.Sandbox) {
	t.Helper()
	if rep := sb.Report(); !rep.Active("namespaces") {
		t.Skipf("namespaces inactive on this host, so the sandbox has no loopback of its own:\n%s", rep)
	}
}

// withPy prefixes a probe program with pyPrelude.
func withPy(body string) string { return pyPrelude + "\n" + body }

// pyIn runs a prelude-based probe in sb with extra argv.
func pyIn(t *testing.T, sb *moat.Sandbox, body string, args ...string) result {
	t.Helper()
	return inSandbox(t, sb, append([]string{"python3", "-c", withPy(body)}, args...)...)
}

// pyHost runs the same probe on the host, under the given wrapper argv
// (e.g. unshare -Urm) or none.
func pyHost(t *testing.T, wrapper []string, body string, args ...string) result {
	t.Helper()
	argv := append(append([]string(nil), wrapper...), "/usr/bin/python3", "-c", withPy(body))
	return onHost(t, append(argv, args...)...)
}

// pongServer listens on network/addr on the host and answers every
// connection with "pong". It returns the port and a counter of accepted
// connections; everything is closed when the test ends.
func pongServer(t *testing.T, network, addr string) (int, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	return ln.Addr().(*net.TCPAddr).Port, serveReply(t, ln, "pong")
}

// serveReply answers every connection to ln with reply, counts them, and
// closes ln when the test ends.
func serveReply(t *testing.T, ln net.Listener, reply string) *atomic.Int32 {
	return moattest.ServeReply(t, ln, reply)
}

// udpSink listens for datagrams on addr on the host and records them. When
// dns is set it answers every query with an A record 127.0.0.1, like a
// resolver would.
type udpSink struct {
	conn *net.UDPConn
	mu   sync.Mutex
	got  [][]byte
}

func newUDPSink(t *testing.T, addr string, dns bool) *udpSink {
	t.Helper()
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		t.Fatalf("listen udp %s: %v", addr, err)
	}
	s := &udpSink{conn: conn}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 2048)
		for {
			n, from, err := conn.ReadFromUDP(buf)
			if err != nil {
				return
			}
			pkt := append([]byte(nil), buf[:n]...)
			s.mu.Lock()
			s.got = append(s.got, pkt)
			s.mu.Unlock()
			if dns {
				if reply := dnsAnswer(pkt); reply != nil {
					_, _ = conn.WriteToUDP(reply, from)
				}
			}
		}
	}()
	t.Cleanup(func() { conn.Close(); wg.Wait() })
	return s
}

func (s *udpSink) port() int { return s.conn.LocalAddr().(*net.UDPAddr).Port }

func (s *udpSink) received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// dnsAnswer answers a one-question DNS query with A 127.0.0.1.
func dnsAnswer(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // zero label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	r := append([]byte(nil), q[:end]...)
	binary.BigEndian.PutUint16(r[2:4], 0x8180) // response, RD, RA, no error
	binary.BigEndian.PutUint16(r[6:8], 1)      // ANCOUNT
	binary.BigEndian.PutUint16(r[8:10], 0)
	binary.BigEndian.PutUint16(r[10:12], 0)
	r = append(r, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
	return r
}

// hostHasIPv6Loopback reports whether ::1 can be bound on the host.
func hostHasIPv6Loopback() bool {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// readSysctl returns the trimmed content of a /proc/sys file, or "".
func readSysctl(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// needUnshare fails loudly when util-linux unshare is missing: the host
// controls of privileged probes run under it.
func needUnshare(t *testing.T) {
	t.Helper()
	need(t, "unshare")
	if out, err := exec.Command("unshare", "-Ur", "true").CombinedOutput(); err != nil {
		t.Fatalf("host cannot create a user namespace as this user, so the privileged probes have no positive control: %v\n%s", err, out)
	}
}
