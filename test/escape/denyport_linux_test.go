//go:build linux

package escape_test

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// portConnectProbe connects to each port of argv on 127.0.0.1 and prints
// "PORT ok" or "PORT ERRNO-NAME".
const portConnectProbe = `
import errno, socket, sys
for port in sys.argv[1:]:
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", int(port)))
        print(port, "ok", flush=True)
    except OSError as e:
        print(port, errno.errorcode.get(e.errno, e.errno), flush=True)
    finally:
        s.close()
`

// portBindProbe binds each ADDR:PORT of argv ("[::1]:8080" binds an IPv6
// socket with IPV6_V6ONLY set, so that it shares no port with IPv4), listens
// on it, and prints "ADDR:PORT ok" or "ADDR:PORT ERRNO-NAME".
const portBindProbe = `
import errno, socket, sys
for spec in sys.argv[1:]:
    addr, port = spec.rsplit(":", 1)
    fam = socket.AF_INET6 if addr.startswith("[") else socket.AF_INET
    s = socket.socket(fam)
    try:
        if fam == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind((addr.strip("[]"), int(port)))
        s.listen()
        print(spec, "ok", flush=True)
    except OSError as e:
        print(spec, errno.errorcode.get(e.errno, e.errno), flush=True)
    finally:
        s.close()
`

// besideLoopback lists the addresses where a sandbox could take a port
// that a server holds on 127.0.0.1 alone, and so meet a client that asks
// for localhost (::1) or another loopback address: [::1] and [::] (both
// IPv6-only) and 127.0.0.2.
func besideLoopback(port string) []string {
	return []string{"[::1]:" + port, "[::]:" + port, "127.0.0.2:" + port}
}

// checkBindDenied runs portBindProbe in sb: every address beside the
// server's on the denied port fails with EACCES, and the same addresses on
// the other port (held by a second listener on 127.0.0.1 alone, the same
// shape) are bound (positive control).
func checkBindDenied(t *testing.T, sb *moat.Sandbox, denied, other string) {
	t.Helper()
	r := inSandbox(t, sb, append([]string{"python3", "-c", portBindProbe}, append(besideLoopback(denied), besideLoopback(other)...)...)...)
	for _, a := range besideLoopback(denied) {
		if !strings.Contains(r.Stdout, a+" EACCES") {
			t.Errorf("a sandbox told to deny port %s bound %s beside the host's listener (or failed otherwise): %s", denied, a, r)
		}
	}
	for _, a := range besideLoopback(other) {
		if !strings.Contains(r.Stdout, a+" ok") {
			t.Errorf("positive control: the sandbox could not bind %s, a port not denied: %s", a, r)
		}
	}
}

// loopbackPort listens on the host's loopback for the test's length and
// returns the port; connects complete in the backlog, unaccepted.
func loopbackPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// Config.DenyTCPConnect keeps a sandbox on the host's network
// (moat.HostNetwork) from connecting to a listed port of the host's
// loopback, as `moat serve` keeps its sessions from its own port: the
// connect fails with EACCES, while a second listener on the same loopback
// is reached (positive control), and without the field the first is
// reached too (control).
func TestDenyTCPConnectUnderHostNetwork(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	denied, other := loopbackPort(t), loopbackPort(t)
	port, err := strconv.Atoi(denied)
	if err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, moat.Config{Network: moat.HostNetwork(), DenyTCPConnect: []uint16{uint16(port)}})
	if !sb.Report().Active("tcp-port-deny") {
		t.Fatalf("the report has no active tcp-port-deny layer: %+v", sb.Report())
	}
	r := inSandbox(t, sb, "python3", "-c", portConnectProbe, denied, other)
	if !strings.Contains(r.Stdout, denied+" EACCES") {
		t.Fatalf("a sandbox told to deny port %s connected to it (or failed otherwise): %s", denied, r)
	}
	if !strings.Contains(r.Stdout, other+" ok") {
		t.Fatalf("positive control: the sandbox could not reach another loopback port, %s: %s", other, r)
	}
	open := newSandbox(t, moat.Config{Network: moat.HostNetwork()})
	mustContain(t, inSandbox(t, open, "python3", "-c", portConnectProbe, denied), denied+" ok")
}

// Config.DenyTCPConnect also keeps a sandbox on the host's network from
// binding a listed port on another address, where it would meet a client
// of the server that holds the port on 127.0.0.1 ("localhost" resolving
// to ::1, say) and take its token: binding [::1], [::] (IPv6-only) or
// 127.0.0.2 on the port fails with EACCES, while the same binds on another
// port work (positive control), and without the field they work on the
// listed port too (control).
func TestDenyTCPBindUnderHostNetwork(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	denied, other := loopbackPort(t), loopbackPort(t)
	port, err := strconv.Atoi(denied)
	if err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, moat.Config{Network: moat.HostNetwork(), DenyTCPConnect: []uint16{uint16(port)}})
	if !sb.Report().Active("tcp-port-deny") {
		t.Fatalf("the report has no active tcp-port-deny layer: %+v", sb.Report())
	}
	checkBindDenied(t, sb, denied, other)
	open := newSandbox(t, moat.Config{Network: moat.HostNetwork()})
	r := inSandbox(t, open, append([]string{"python3", "-c", portBindProbe}, besideLoopback(denied)...)...)
	for _, a := range besideLoopback(denied) {
		mustContain(t, r, a+" ok")
	}
}

// Without user namespaces (so on the host's network stack) and off the
// host's network, Landlock allows connecting to the proxy's port only, but
// a bind is not a connect: the port deny layer denies binding a listed
// port on another address there too, and allows another port (positive
// control); without the field the bind works (control).
func TestDenyTCPBindWithoutNamespaces(t *testing.T) {
	need(t, "python3")
	withoutNamespaces(t, func(t *testing.T) {
		denied, other := loopbackPort(t), loopbackPort(t)
		port, err := strconv.Atoi(denied)
		if err != nil {
			t.Fatal(err)
		}
		sb := newSandbox(t, moat.Config{DenyTCPConnect: []uint16{uint16(port)}})
		if rep := sb.Report(); rep.Active("namespaces") || !rep.Active("tcp-port-deny") {
			t.Fatalf("want no namespaces and an active tcp-port-deny layer:\n%s", rep)
		}
		checkBindDenied(t, sb, denied, other)
		open := newSandbox(t, moat.Config{})
		r := inSandbox(t, open, append([]string{"python3", "-c", portBindProbe}, besideLoopback(denied)...)...)
		for _, a := range besideLoopback(denied) {
			mustContain(t, r, a+" ok")
		}
	})
}
