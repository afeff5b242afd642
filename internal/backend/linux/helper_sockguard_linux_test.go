package linux

import (
	"encoding/binary"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"
)

// TestBoundUnixSockets: a socket bound to a path in this network namespace
// is listed by its file's identity, as fstat gives it; an unbound one
// and a removed one are not.
func TestBoundUnixSockets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	got, err := boundUnixSockets()
	if err != nil {
		t.Fatal(err)
	}
	if !got[vfsIDOf(&st)] {
		t.Fatalf("bound socket %s (%+v) not among %d listed", path, vfsIDOf(&st), len(got))
	}
	var other unix.Stat_t
	if err := unix.Stat(t.TempDir(), &other); err != nil {
		t.Fatal(err)
	}
	if got[vfsIDOf(&other)] {
		t.Fatalf("a directory is listed as a bound socket")
	}
}

func TestVfsIDOf(t *testing.T) {
	for _, c := range []struct {
		major, minor uint32
		want         uint32
	}{{0, 0, 0}, {8, 1, 8<<20 | 1}, {259, 0x12345, 259<<20 | 0x12345}, {0, 70, 70}} {
		st := unix.Stat_t{Dev: unix.Mkdev(c.major, c.minor), Ino: 1<<40 | 7}
		got := vfsIDOf(&st)
		if got.dev != c.want || got.ino != 7 {
			t.Errorf("vfsIDOf(%d:%d) = %+v, want dev %#x ino 7", c.major, c.minor, got, c.want)
		}
	}
}

// diagMsg builds one SOCK_DIAG_BY_FAMILY message with a UNIX_DIAG_VFS
// attribute.
func diagMsg(ino, dev uint32) []byte {
	b := make([]byte, unix.NLMSG_HDRLEN+unixDiagMsgLen+12)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	a := b[unix.NLMSG_HDRLEN+unixDiagMsgLen:]
	binary.NativeEndian.PutUint16(a[0:], 12)
	binary.NativeEndian.PutUint16(a[2:], unixDiagVFS)
	binary.NativeEndian.PutUint32(a[4:], ino)
	binary.NativeEndian.PutUint32(a[8:], dev)
	return b
}

func doneMsg() []byte {
	b := make([]byte, unix.NLMSG_HDRLEN+4)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], unix.NLMSG_DONE)
	return b
}

func TestParseUnixDiag(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		done bool
		want []vfsID
		err  bool
	}{
		{name: "one", in: diagMsg(5, 9), want: []vfsID{{dev: 9, ino: 5}}},
		{name: "two and done", in: append(append(diagMsg(5, 9), diagMsg(6, 9)...), doneMsg()...), done: true, want: []vfsID{{9, 5}, {9, 6}}},
		{name: "empty", in: nil},
		{name: "truncated header", in: diagMsg(5, 9)[:20], err: true},
		{name: "length past the end", in: func() []byte { b := diagMsg(5, 9); binary.NativeEndian.PutUint32(b, 200); return b }(), err: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := map[vfsID]bool{}
			done, err := parseUnixDiag(c.in, out)
			if (err != nil) != c.err || done != c.done {
				t.Fatalf("done %v err %v; want done %v, error %v", done, err, c.done, c.err)
			}
			for _, w := range c.want {
				if !out[w] {
					t.Errorf("missing %+v in %v", w, out)
				}
			}
		})
	}
}

func FuzzParseUnixDiag(f *testing.F) {
	f.Add(diagMsg(5, 9))
	f.Add(append(diagMsg(1, 2), doneMsg()...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseUnixDiag(b, map[vfsID]bool{})
	})
}

// TestProbeSocketGuard: these hosts have every feature the guard needs; a
// missing one is a bug here, not a skip.
func TestProbeSocketGuard(t *testing.T) {
	if ok, why := probeSocketGuard(); !ok {
		t.Fatalf("socket guard unavailable: %s", why)
	}
}

// TestSocketLayer: the guard is on exactly where it can hold (namespaces
// and kernel support); a host that lacks the kernel support fails Strict
// and reports a gap under BestEffort; granted sockets are counted, made
// visible when nothing else shows them, and identified for the guard.
func TestSocketLayer(t *testing.T) {
	sock := spec.Socket{Path: "/elsewhere/agent.sock", Dev: 1, Ino: 2}
	inWork := spec.Socket{Path: "/w/run/s.sock", Dev: 1, Ino: 3}
	for _, c := range []struct {
		name       string
		guard, ns  bool
		bestEffort bool
		active     bool
		missing    bool
		gap        bool
	}{
		{name: "full host", guard: true, ns: true, active: true},
		{name: "no kernel support", ns: true, missing: true},
		{name: "no kernel support, best effort", ns: true, bestEffort: true, missing: true, gap: true},
		{name: "no namespaces", guard: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := &Engine{policy: spec.Policy{WorkDir: "/w", AutoWorkDir: true, BestEffort: c.bestEffort, Sockets: []spec.Socket{sock, inWork}},
				host: HostInfo{Seccomp: true, LandlockABI: 7, SocketGuard: c.guard}}
			e.configure(c.ns)
			var layer *spec.Layer
			for _, l := range e.Report().Layers {
				if l.Name == "unix-sockets" {
					layer = &l
				}
			}
			gap := slices.ContainsFunc(e.Report().Gaps, func(g string) bool { return strings.Contains(g, "socket guard") })
			if layer == nil || layer.Active != c.active {
				t.Fatalf("layer %+v, want active %v", layer, c.active)
			}
			if c.active && !strings.Contains(layer.Detail, "2 granted") {
				t.Errorf("detail %q does not count the granted sockets", layer.Detail)
			}
			missing := slices.ContainsFunc(e.Missing(), func(m string) bool { return strings.HasPrefix(m, "unix sockets: ") })
			if missing != c.missing || gap != c.gap {
				t.Errorf("missing %v gap %v, want %v %v (%v)", missing, gap, c.missing, c.gap, e.Missing())
			}
			s := e.base
			if s.SuperviseSockets != c.active {
				t.Errorf("SuperviseSockets = %v", s.SuperviseSockets)
			}
			if !slices.Contains(s.Grants, sock.Path) || slices.Contains(s.Grants, inWork.Path) {
				t.Errorf("grants %v: want the socket outside the workdir made visible, the one inside not", s.Grants)
			}
			if len(s.SocketGrants) != 2 || s.Identity[sock.Path] != (fileID{Dev: 1, Ino: 2}) {
				t.Errorf("socket identities %v, %v", s.SocketGrants, s.Identity)
			}
		})
	}
}
