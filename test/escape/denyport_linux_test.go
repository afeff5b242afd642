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
