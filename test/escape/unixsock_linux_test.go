//go:build linux

package escape_test

// Unix sockets: agents and buses that listen on the host (ssh-agent,
// gpg-agent, 1Password, the D-Bus session bus, Docker) authenticate clients
// by their uid, which the sandbox shares. The sandbox must not reach them,
// by path or in the abstract namespace.

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/moat-sandbox/moat"
)

// unixProbe connects to argv[1], a path or "@name" for an abstract socket,
// and prints what the server sent.
const unixProbe = `
addr = sys.argv[1]
if addr.startswith("@"):
    addr = "\0" + addr[1:]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(addr)
    d = s.recv(32)
    s.close()
    return d.decode()
probe("connect", conn)
`

// unixAgent listens on a Unix socket address on the host and answers every
// connection with "agent-pong". It returns a counter of accepted
// connections; the listener (and a pathname socket's file) goes away when
// the test ends.
func unixAgent(t *testing.T, addr string) *atomic.Int32 {
	t.Helper()
	ln, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatalf("listen unix %s: %v", addr, err)
	}
	return serveReply(t, ln, "agent-pong")
}

// agentDir creates dir with mode perm (removed when the test ends) and
// returns the path of a socket in it.
func agentDir(t *testing.T, dir string, perm os.FileMode, sock string) string {
	t.Helper()
	if err := os.Mkdir(dir, perm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, perm); err != nil { // past the umask
		t.Fatal(err)
	}
	return filepath.Join(dir, sock)
}

// TestUnixSocketHostUnreachable: host Unix sockets cannot be connected to
// from the sandbox, wherever they live.
func TestUnixSocketHostUnreachable(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	tag := strconv.Itoa(os.Getpid())

	cases := []struct {
		name string
		// addr prepares the listening address, or skips.
		addr func(t *testing.T) string
	}{
		{
			// Like ssh-agent's /tmp/ssh-XXXX/agent.N, in a directory
			// anyone may search, so that only the sandbox can keep it out.
			name: "ssh-agent-in-tmp",
			addr: func(t *testing.T) string {
				return agentDir(t, filepath.Join(os.TempDir(), "moat-agent-"+tag), 0o755, "agent.sock")
			},
		},
		{
			// Like the D-Bus session bus (or podman.sock, docker.sock of
			// rootless Docker) in $XDG_RUNTIME_DIR.
			name: "session-bus-in-run-user",
			addr: func(t *testing.T) string {
				runUser := "/run/user/" + strconv.Itoa(os.Getuid())
				if fi, err := os.Stat(runUser); err != nil || !fi.IsDir() {
					t.Skipf("%s does not exist on this host (no login session), so there is no session-bus location to test", runUser)
				}
				return agentDir(t, filepath.Join(runUser, "moat-bus-"+tag), 0o700, "bus")
			},
		},
		{
			// Like ~/.1password/agent.sock, ~/.gnupg/S.gpg-agent (where
			// there is no /run/user) or Docker Desktop's
			// ~/.docker/desktop/docker.sock: agent sockets that live in
			// the home directory, which the sandbox cannot even list.
			name: "agent-in-home",
			addr: func(t *testing.T) string {
				return agentDir(t, filepath.Join(home(t), ".moat-agent-"+tag), 0o700, "agent.sock")
			},
		},
		{
			// An abstract socket: no file at all. Kept out by the network
			// namespace and by Landlock's abstract-socket scope.
			name: "abstract",
			addr: func(t *testing.T) string { return "@moat-abstract-" + tag },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := tc.addr(t)
			accepted := unixAgent(t, addr)

			in := pyIn(t, sb, unixProbe, addr)
			got := verdict(t, probes(in), "connect", in)
			n := accepted.Load()
			host := pyHost(t, nil, unixProbe, addr)
			ctl := verdict(t, probes(host), "connect", host)
			if ctl != "OK agent-pong" {
				t.Fatalf("control: the host could not reach its own socket %s (%s): %s", addr, ctl, host)
			}
			if isOK(got) || n != 0 {
				t.Fatalf("the sandbox connected to the host's Unix socket %s: probe %q, %d connection(s) accepted\n%s", addr, got, n, in)
			}
			t.Logf("sandbox: %s; host: %s", got, ctl)
		})
	}
}

// TestUnixSocketOwnWorks: Unix sockets the sandboxed code makes itself, by
// path in its working directory and in the abstract namespace, work.
func TestUnixSocketOwnWorks(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	prog := `
import os, socket, sys, threading
addr = sys.argv[1]
if addr.startswith("@"):
    addr = "\0" + addr[1:] + str(os.getpid())
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(addr); srv.listen(1)
def serve():
    c, _ = srv.accept(); c.sendall(b"own-unix-pong"); c.close()
th = threading.Thread(target=serve); th.start()
cl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
cl.settimeout(5); cl.connect(addr)
print(cl.recv(32).decode()); cl.close(); th.join()
if not addr.startswith("\0"):
    os.unlink(addr)
`
	for _, tc := range []struct{ name, addr string }{
		{"path-in-workdir", "own.sock"},
		{"path-in-workdir-subdir", "sub/own.sock"},
		{"abstract", "@moat-own-abstract-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := "import os; os.makedirs('sub', exist_ok=True)\n" + prog
			r := inSandbox(t, sb, "python3", "-c", script, tc.addr)
			if r.Err != nil {
				t.Fatalf("own Unix socket failed: %s", r)
			}
			mustContain(t, r, "own-unix-pong")
		})
	}
}

// TestUnixSocketHostSocketPassedIn: a Unix socket the host created (so in
// the host's network namespace) and passed in with ExtraFiles cannot be
// connected from the sandbox to the host's abstract sockets nor to a host
// path socket: the socket guard carries out connect() itself and looks an
// abstract name up only for sockets of the sandbox's own namespace.
func TestUnixSocketHostSocketPassedIn(t *testing.T) {
	t.Parallel()
	tag := strconv.Itoa(os.Getpid())
	abstract := "@moat-passed-in-" + tag
	accepted := unixAgent(t, abstract)
	dir := agentDir(t, filepath.Join(os.TempDir(), "moat-passed-in-"+tag), 0o755, "agent.sock")
	pathAccepted := unixAgent(t, dir)
	sb := newSandbox(t, readGrant(t, moat.Config{}, filepath.Dir(dir)))
	prog := `
import socket, sys
for addr in sys.argv[1:]:
    a = "\0" + addr[1:] if addr.startswith("@") else addr
    def conn():
        s = socket.socket(fileno=3)
        s.settimeout(5)
        s.connect(a)
        return s.recv(32).decode()
    probe(addr.startswith("@") and "abstract" or "path", conn)
`
	for _, addr := range []string{abstract, dir} {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		f := os.NewFile(uintptr(fd), "host-socket")
		c := sb.Command("python3", "-c", withPy(prog), addr)
		c.ExtraFiles = []*os.File{f}
		r := runCmd(c)
		f.Close()
		m := probes(r)
		if len(m) != 1 {
			t.Fatalf("%s: probe printed %v: %s", addr, m, r)
		}
		for name, v := range m {
			if isOK(v) {
				t.Errorf("%s: a host socket passed in reached %s: %s", name, addr, v)
			}
			// The guard's own answer, not any failure (a missing fd 3
			// fails too): EPERM for an abstract name looked up from a
			// foreign namespace, EACCES for a host path socket.
			if want := map[string]int{"abstract": ePERM, "path": 13 /* EACCES */}[name]; !errnoIs(v, want) {
				t.Errorf("%s: %s: %q, want errno %d from the socket guard", name, addr, v, want)
			}
		}
	}
	if n, p := accepted.Load(), pathAccepted.Load(); n != 0 || p != 0 {
		t.Fatalf("host sockets accepted %d (abstract) and %d (path) connections", n, p)
	}
	// Positive control: the same kind of socket, on the host, connects.
	for _, addr := range []string{abstract, dir} {
		host := pyHost(t, nil, unixProbe, addr)
		if v := verdict(t, probes(host), "connect", host); v != "OK agent-pong" {
			t.Fatalf("control: the host could not reach %s: %s", addr, v)
		}
	}
}
