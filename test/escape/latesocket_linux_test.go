//go:build linux

package escape_test

// Late Unix sockets: Landlock (ABI 7 and before) does not mediate connect()
// on a path Unix socket, so any directory the sandbox sees live (a grant,
// the working directory, the home's curated entries, shared temp) can grow
// a host socket after the start (tmux, an agent, a Jupyter kernel), which
// the sandbox would then drive. The socket guard carries out every
// connect() and every send with a destination itself and lets a path
// socket through only if the sandbox bound it or the user granted it.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// lateProbe reaches the socket at argv[1] three ways: by its absolute path,
// through a symbolic link the sandbox makes in its working directory, and
// by a relative name from its directory; and, with argv[2] == "dgram",
// sends a datagram with sendto and sendmsg instead of connecting.
const lateProbe = `
addr = sys.argv[1]
dgram = len(sys.argv) > 2 and sys.argv[2] == "dgram"
def reach(a):
    def stream():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(a)
        d = s.recv(32)
        s.close()
        return d.decode()
    def sendto():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        n = s.sendto(b"late-dgram", a)
        s.close()
        return n
    def sendmsg():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        n = s.sendmsg([b"late-", b"msg"], [], 0, a)
        s.close()
        return n
    return (sendto, sendmsg) if dgram else (stream,)
def run(name, a):
    for f in reach(a):
        probe(name + "/" + f.__name__, f)
run("absolute", addr)
link = os.path.join(os.getcwd(), "late-link-%d" % os.getpid())
os.symlink(addr, link)
run("symlink", link)
os.unlink(link)
here = os.getcwd()
os.chdir(os.path.dirname(addr))
run("relative", os.path.basename(addr))
os.chdir(here)
fd = os.open(addr, os.O_PATH)
run("proc-fd", "/proc/self/fd/%d" % fd)
`

// dgramSink listens for datagrams on a Unix path on the host and counts
// them.
func dgramSink(t *testing.T, addr string) *atomic.Int32 {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listen unixgram %s: %v", addr, err)
	}
	var got atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	t.Cleanup(func() { c.Close(); <-done; os.Remove(addr) })
	return &got
}

// hostDir makes a fresh directory at path (removed at the end) with mode
// 0755, the way tmux or an agent would find it.
func hostDir(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(path) })
	return path
}

// socketRefused reports whether sb recorded a socket refusal for path.
func socketRefused(sb *moat.Sandbox, path string) bool {
	return slices.ContainsFunc(sb.Refusals(), func(r moat.Refusal) bool {
		return r.Kind == "socket" && r.Subject == path && strings.Contains(r.Allow, "--allow-socket")
	})
}

// TestLateSocketUnreachable: a host socket that appears after the
// sandbox's first command, in any directory the sandbox can see, cannot be
// connected to or sent to, by any spelling of its path.
func TestLateSocketUnreachable(t *testing.T) {
	t.Parallel()
	tag := strconv.Itoa(os.Getpid())
	tmp := os.TempDir()
	cases := []struct {
		name string
		// setup makes the directory the socket will appear in (it exists
		// before the sandbox) and returns the socket's path and the config.
		setup func(t *testing.T) (string, moat.Config)
		dgram bool
	}{
		{
			// Like /tmp/tmux-UID/: an empty directory of shared temp,
			// visible at the default level unless shared temp hides it.
			name: "shared-temp-at-default",
			setup: func(t *testing.T) (string, moat.Config) {
				// Not named moat-*: shared temp leaves those out.
				d := hostDir(t, filepath.Join(tmp, "tmux-late-"+tag))
				return filepath.Join(d, "default"), moat.Config{Isolation: moat.IsolationDefault}
			},
		},
		{
			name: "readable-grant-in-tmp",
			setup: func(t *testing.T) (string, moat.Config) {
				d := hostDir(t, filepath.Join(tmp, "moat-late-"+tag+"-grant"))
				return filepath.Join(d, "agent.sock"), readGrant(t, moat.Config{Isolation: moat.IsolationDefault}, d)
			},
		},
		{
			name: "nested-in-a-grant",
			setup: func(t *testing.T) (string, moat.Config) {
				d := hostDir(t, filepath.Join(tmp, "moat-late-"+tag+"-nest"))
				deep := hostDir(t, filepath.Join(d, "a", "b", "c"))
				return filepath.Join(deep, "s"), readGrant(t, moat.Config{}, d)
			},
		},
		{
			// A Jupyter kernel or a language server in a cache directory
			// of the curated home.
			name: "curated-home-cache",
			setup: func(t *testing.T) (string, moat.Config) {
				d := plantHomeDir(t, filepath.Join(".cache", "pip", "moat-late-"+tag))
				return filepath.Join(d, "kernel.sock"), moat.Config{Isolation: moat.IsolationDefault}
			},
		},
		{
			// A host process that keeps its socket in the user's project.
			name: "supplied-workdir",
			setup: func(t *testing.T) (string, moat.Config) {
				d := t.TempDir()
				return filepath.Join(d, "server.sock"), moat.Config{WorkDir: d}
			},
		},
		{
			name: "readable-grant-in-home",
			setup: func(t *testing.T) (string, moat.Config) {
				d := plantHomeDir(t, "moat-late-"+tag+"-home")
				return filepath.Join(d, "agent.sock"), readGrant(t, moat.Config{}, d)
			},
		},
		{
			name:  "datagram-in-a-grant",
			dgram: true,
			setup: func(t *testing.T) (string, moat.Config) {
				d := hostDir(t, filepath.Join(tmp, "moat-late-"+tag+"-dgram"))
				return filepath.Join(d, "notify"), readGrant(t, moat.Config{Isolation: moat.IsolationDefault}, d)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, cfg := tc.setup(t)
			sb := newSandbox(t, cfg)
			if r := inSandbox(t, sb, "true"); r.Err != nil {
				t.Fatalf("first command: %s", r)
			}
			var count func() int32
			args := []string{addr}
			if tc.dgram {
				got := dgramSink(t, addr)
				count = got.Load
				args = append(args, "dgram")
			} else {
				accepted := unixAgent(t, addr)
				count = accepted.Load
			}
			in := pyIn(t, sb, lateProbe, args...)
			time.Sleep(50 * time.Millisecond) // let a datagram that got through arrive
			n := count()
			m := probes(in)
			if len(m) == 0 {
				t.Fatalf("the probe printed nothing: %s", in)
			}
			for name, v := range m {
				if isOK(v) {
					t.Errorf("%s: the sandbox reached the host's socket %s: %s", name, addr, v)
				}
			}
			if n != 0 {
				t.Errorf("the host's socket %s got %d connection(s) or datagram(s) from the sandbox\n%s", addr, n, in)
			}
			if v := m["absolute/"+map[bool]string{false: "stream", true: "sendto"}[tc.dgram]]; !errnoIs(v, 13) && !strings.HasPrefix(tc.name, "shared-temp") {
				t.Errorf("absolute path: %q, want EACCES from the socket guard\n%s", v, in)
			}
			if !strings.HasPrefix(tc.name, "shared-temp") && !socketRefused(sb, addr) {
				t.Errorf("no socket refusal recorded for %s: %v", addr, sb.Refusals())
			}
			// Positive control: the host reaches its own socket.
			host := pyHost(t, nil, lateProbe, args...)
			for name, v := range probes(host) {
				if name == "proc-fd/stream" || name == "proc-fd/sendto" || name == "proc-fd/sendmsg" || isOK(v) {
					continue
				}
				t.Fatalf("control: the host could not reach its own socket by %s: %s\n%s", name, v, host)
			}
			if count() == 0 {
				t.Fatalf("control: the host's probe reached nothing\n%s", host)
			}
			t.Logf("sandbox: %v", m)
		})
	}
}

// TestLateSocketGranted: a host socket named in Config.Sockets is reachable
// (the positive control of the guard), is listed in the report, and does
// not open its neighbours.
func TestLateSocketGranted(t *testing.T) {
	t.Parallel()
	d := hostDir(t, filepath.Join(os.TempDir(), "moat-granted-"+strconv.Itoa(os.Getpid())))
	addr := filepath.Join(d, "agent.sock")
	accepted := unixAgent(t, addr)
	other := filepath.Join(d, "other.sock")
	otherAccepted := unixAgent(t, other)

	sb := newSandbox(t, readGrant(t, moat.Config{Sockets: []string{addr}}, d))
	in := pyIn(t, sb, unixProbe, addr)
	if v := verdict(t, probes(in), "connect", in); v != "OK agent-pong" || accepted.Load() != 1 {
		t.Fatalf("a granted socket was not reachable: %s (%d accepted)\n%s", v, accepted.Load(), in)
	}
	in = pyIn(t, sb, unixProbe, other)
	if v := verdict(t, probes(in), "connect", in); isOK(v) || otherAccepted.Load() != 0 {
		t.Fatalf("a socket next to the granted one was reachable: %s\n%s", v, in)
	}
	var layer *moat.Layer
	for _, l := range sb.Report().Layers {
		if l.Name == "unix-sockets" {
			layer = &l
		}
	}
	if layer == nil || !layer.Active || !strings.Contains(layer.Detail, "1 granted") {
		t.Fatalf("report: unix-sockets layer %+v, want it active with 1 granted socket", layer)
	}

	// A granted socket in a directory the sandbox does not otherwise see
	// is made visible on its own.
	alone := hostDir(t, filepath.Join(os.TempDir(), "moat-granted-alone-"+strconv.Itoa(os.Getpid())))
	aloneAddr := filepath.Join(alone, "agent.sock")
	aloneAccepted := unixAgent(t, aloneAddr)
	sb2 := newSandbox(t, moat.Config{Sockets: []string{aloneAddr}})
	in = pyIn(t, sb2, unixProbe, aloneAddr)
	if v := verdict(t, probes(in), "connect", in); v != "OK agent-pong" || aloneAccepted.Load() != 1 {
		t.Fatalf("a granted socket outside every grant was not reachable: %s\n%s", v, in)
	}

	// Config.Sockets checks what it is given.
	for _, bad := range []string{d, filepath.Join(d, "missing.sock"), "relative.sock"} {
		if sb, err := moat.New(moat.Config{Sockets: []string{bad}}); err == nil {
			sb.Close()
			t.Errorf("Config.Sockets %q: accepted", bad)
		}
	}
}

// TestLateSocketOwnWorks: what the guard must not break. A socket a
// command binds in the working directory is reachable from a later
// command, datagrams between the sandbox's own sockets arrive, and descriptors
// passed with sendmsg arrive intact.
func TestLateSocketOwnWorks(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	server := sb.Command("python3", "-c", `
import socket, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("srv.sock"); s.listen(4)
open("ready", "w").close()
c, _ = s.accept(); c.sendall(b"own-pong"); c.close()
`)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer server.Wait()
	r := sh(t, sb, `i=0; while [ ! -e ready ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done`)
	if r.Err != nil {
		t.Fatal(r)
	}
	in := pyIn(t, sb, unixProbe, "srv.sock")
	if v := verdict(t, probes(in), "connect", in); v != "OK own-pong" {
		t.Fatalf("a socket another command of the sandbox bound: %s\n%s", v, in)
	}
	// Stream, datagram, and SCM_RIGHTS, all within one process.
	r = python(t, sb, `
import os, socket, array
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind("own.dgram")
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
c.sendto(b"one", "own.dgram"); c.sendmsg([b"tw", b"o"], [], 0, "own.dgram")
print(d.recv(16).decode(), d.recv(16).decode())
a, b = socket.socketpair()
rd, wr = os.pipe(); os.write(wr, b"via-fd"); os.close(wr)
a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [rd]))])
msg, anc, _, _ = b.recvmsg(1, socket.CMSG_LEN(4))
fd = array.array("i", anc[0][2])[0]
print(os.read(fd, 16).decode())
a.sendall(b"stream-ok"); print(b.recv(16).decode())
`)
	if r.Err != nil {
		t.Fatalf("own sockets: %s", r)
	}
	for _, want := range []string{"one two", "via-fd", "stream-ok"} {
		mustContain(t, r, want)
	}
	if refused := sb.Refusals(); len(refused) != 0 {
		t.Fatalf("own sockets were recorded as refused: %v", refused)
	}
}

// raceProbe connects, thousands of times, with an address that another
// thread keeps rewriting between the sandbox's own socket and argv[1]: a
// guard that checked the address and then let the kernel read it again
// would sooner or later connect to argv[1].
const raceProbe = `
import ctypes, socket, struct, sys, threading, os
libc = ctypes.CDLL(None, use_errno=True)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind("race.sock"); srv.listen(128)
def accept():
    while True:
        c, _ = srv.accept(); c.close()
threading.Thread(target=accept, daemon=True).start()
own = os.path.abspath("race.sock").encode()
host = sys.argv[1].encode()
buf = ctypes.create_string_buffer(110)
struct.pack_into("H", buf, 0, socket.AF_UNIX)
def put(p):
    ctypes.memmove(ctypes.addressof(buf) + 2, p + b"\0" * (108 - len(p)), 108)
stop = []
def flip():
    while not stop:
        put(host); put(own)
put(own)
t = threading.Thread(target=flip); t.start()
ok = 0
for i in range(3000):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if libc.connect(s.fileno(), buf, 110) == 0:
        ok += 1
    s.close()
stop.append(1); t.join()
print("own-connects", ok)
`

// TestLateSocketAddressRace: the guard copies the address once and
// connects to what it checked, so rewriting the address while connect()
// runs never reaches a host socket; the same program reaches the sandbox's
// own socket (the positive control).
func TestLateSocketAddressRace(t *testing.T) {
	t.Parallel()
	d := hostDir(t, filepath.Join(os.TempDir(), "moat-race-"+strconv.Itoa(os.Getpid())))
	addr := filepath.Join(d, "s")
	sb := newSandbox(t, readGrant(t, moat.Config{}, d))
	if r := inSandbox(t, sb, "true"); r.Err != nil {
		t.Fatal(r)
	}
	accepted := unixAgent(t, addr)
	r := inSandbox(t, sb, "python3", "-c", raceProbe, addr)
	if r.Err != nil {
		t.Fatalf("race probe: %s", r)
	}
	var ok int
	if _, err := fmt.Sscanf(strings.TrimSpace(r.Stdout), "own-connects %d", &ok); err != nil || ok == 0 {
		t.Fatalf("control: the racing program never reached its own socket: %s", r)
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the address race reached the host's socket %d time(s) (%d own connects)", n, ok)
	}
	t.Logf("%d of 3000 connects reached the sandbox's own socket, none the host's", ok)
}
