//go:build linux

package escape_test

// Network: with the zero Config the sandbox has no network. Every probe
// targets only the loopback of the host (listeners this test starts) or the
// sandbox's own loopback, never another address.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/moat-sandbox/moat"
)

// connectProbe connects to argv[1]:argv[2] (family from the address) and
// prints what the server sent.
const connectProbe = `
host, port = sys.argv[1], int(sys.argv[2])
def conn():
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect((host, port))
    d = s.recv(16)
    s.close()
    return d.decode()
probe("connect", conn)
`

// TestNetworkOutboundDenied (G6, E6): a TCP server on the host's loopback is
// out of reach, over IPv4, IPv6 and IPv4-mapped IPv6, from Python and from
// curl, including with every proxy explicitly bypassed.
func TestNetworkOutboundDenied(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})

	for _, tc := range []struct {
		name, network, listen, dial string
		needV6                      bool
	}{
		{name: "G6/tcp4-127.0.0.1", network: "tcp4", listen: "127.0.0.1:0", dial: "127.0.0.1"},
		{name: "G6/tcp6-::1", network: "tcp6", listen: "[::1]:0", dial: "::1", needV6: true},
		{name: "G6/tcp6-v4mapped", network: "tcp", listen: "127.0.0.1:0", dial: "::ffff:127.0.0.1", needV6: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.needV6 && !hostHasIPv6Loopback() {
				t.Skipf("host has no ::1")
			}
			port, accepted := pongServer(t, tc.network, tc.listen)
			in := pyIn(t, sb, connectProbe, tc.dial, strconv.Itoa(port))
			got := verdict(t, probes(in), "connect", in)
			if isOK(got) || strings.Contains(in.Stdout, "pong") {
				t.Fatalf("sandbox reached the host's %s:%d: %s", tc.dial, port, in)
			}
			if n := accepted.Load(); n != 0 {
				t.Fatalf("host listener accepted %d connection(s) from the sandbox: %s", n, in)
			}
			host := pyHost(t, nil, connectProbe, tc.dial, strconv.Itoa(port))
			if v := verdict(t, probes(host), "connect", host); v != "OK pong" {
				t.Fatalf("control: host could not reach its own listener (%s): %s", v, host)
			}
			t.Logf("sandbox: %s; host: OK pong", got)
		})
	}

	curlCases := []struct{ name, flags string }{
		{name: "G6/curl", flags: ""},
		{name: "E6/curl-noproxy-direct", flags: "--noproxy '*'"},
	}
	for _, tc := range curlCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			need(t, "curl")
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				io.WriteString(w, "moat-http-pong\n")
			}))
			t.Cleanup(srv.Close)
			script := fmt.Sprintf("curl -sS %s --max-time 5 %s/ || echo BLOCKED", tc.flags, srv.URL)
			in := sh(t, sb, script)
			mustContain(t, in, "BLOCKED")
			mustNotContain(t, in, "moat-http-pong")
			if n := hits.Load(); n != 0 {
				t.Fatalf("host HTTP server got %d request(s) from the sandbox: %s", n, in)
			}
			host := hostSh(t, script)
			mustContain(t, host, "moat-http-pong")
			mustNotContain(t, host, "BLOCKED")
		})
	}
}

// socketProbe creates sockets of every kind the policy talks about and uses
// the ones that reach the host's loopback. argv: TCP port, UDP sink port,
// fake DNS port.
const socketProbe = `
tcp_port, udp_port, dns_port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def mk(fam, typ, proto=0):
    def f():
        s = socket.socket(fam, typ, proto)
        s.close()
        return "created"
    return f
probe("tcp4-socket", mk(socket.AF_INET, socket.SOCK_STREAM))
probe("tcp4-socket-ipproto-tcp", mk(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC, 6))
probe("tcp6-socket", mk(socket.AF_INET6, socket.SOCK_STREAM))
probe("unix-stream-socket", mk(socket.AF_UNIX, socket.SOCK_STREAM))
probe("unix-dgram-socket", mk(socket.AF_UNIX, socket.SOCK_DGRAM))
probe("unix-socketpair", lambda: len(socket.socketpair()))
probe("udp4-socket", mk(socket.AF_INET, socket.SOCK_DGRAM))
probe("udp6-socket", mk(socket.AF_INET6, socket.SOCK_DGRAM))
probe("udp4-socket-cloexec", mk(socket.AF_INET, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC))
probe("icmp-ping-socket", mk(socket.AF_INET, socket.SOCK_DGRAM, 1))
probe("raw-socket", mk(socket.AF_INET, socket.SOCK_RAW, 255))
probe("raw6-socket", mk(socket.AF_INET6, socket.SOCK_RAW, 255))
probe("packet-socket", mk(17, socket.SOCK_RAW, 0))
probe("netlink-route-socket", mk(16, socket.SOCK_RAW, 0))
probe("vsock-socket", mk(40, socket.SOCK_STREAM, 0))
probe("mptcp-socket", mk(socket.AF_INET, socket.SOCK_STREAM, 262))
probe("mptcp6-socket", mk(socket.AF_INET6, socket.SOCK_STREAM, 262))
probe("inet-socketpair", lambda: len(socket.socketpair(socket.AF_INET, socket.SOCK_STREAM)))
def udp_send():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    n = s.sendto(b"moat-udp-datagram", ("127.0.0.1", udp_port))
    s.close()
    return n
probe("udp-send", udp_send)
def dns_query():
    q = struct.pack(">HHHHHH", 0x6d6f, 0x0100, 1, 0, 0, 0)
    for label in b"example.com".split(b"."):
        q += bytes([len(label)]) + label
    q += b"\x00" + struct.pack(">HH", 1, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.sendto(q, ("127.0.0.1", dns_port))
    r = s.recv(512)
    s.close()
    return ".".join(str(b) for b in r[-4:])
probe("dns-udp-query", dns_query)
def resolve():
    return socket.getaddrinfo("example.com", 80)[0][4][0]
probe("getaddrinfo-example.com", resolve)
probe("getaddrinfo-localhost", lambda: socket.getaddrinfo("localhost", 80, socket.AF_INET)[0][4][0])
def tfo_sendto():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # blocking: a timeout makes it EINPROGRESS
    n = s.sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("127.0.0.1", tcp_port))
    s.close()
    return n
probe("tfo-sendto", tfo_sendto)
def tfo_sendmsg():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # blocking: a timeout makes it EINPROGRESS
    n = s.sendmsg([b"GET / HTTP/1.0\r\n\r\n"], [], socket.MSG_FASTOPEN, ("127.0.0.1", tcp_port))
    s.close()
    return n
probe("tfo-sendmsg", tfo_sendmsg)
def tfo_connect_opt():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, 30, 1)
    s.close()
    return "set"
probe("tfo-connect-setsockopt", tfo_connect_opt)
def nodelay():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.close()
    return "set"
probe("tcp-nodelay-setsockopt", nodelay)
`

// TestNetworkSocketPolicy (E3, E4, E5, DNS, MPTCP, TCP Fast Open): only
// AF_UNIX and plain TCP sockets can be created; UDP (so DNS), raw, packet,
// netlink, vsock and MPTCP sockets fail with exactly EPERM, and TCP Fast
// Open, which connects without connect(2), is refused.
func TestNetworkSocketPolicy(t *testing.T) {
	t.Parallel()
	needUnshare(t)
	sb := newSandbox(t, moat.Config{})
	tcpPort, tcpAccepted := pongServer(t, "tcp4", "127.0.0.1:0")
	udp := newUDPSink(t, "127.0.0.1:0", false)
	dns := newUDPSink(t, "127.0.0.1:0", true)
	args := []string{strconv.Itoa(tcpPort), strconv.Itoa(udp.port()), strconv.Itoa(dns.port())}

	in := pyIn(t, sb, socketProbe, args...)
	inM := probes(in)
	// What reached the host from the sandbox, before any control runs.
	inTCP, inUDP, inDNS := tcpAccepted.Load(), udp.received(), dns.received()

	host := pyHost(t, nil, socketProbe, args...)
	hostM := probes(host)
	// A capable process in its own user and network namespace: what the
	// kernel alone allows once raw and packet sockets are permitted.
	capable := pyHost(t, []string{"unshare", "-Urn"}, socketProbe, args...)
	capM := probes(capable)
	t.Logf("sandbox:\n%s\nhost:\n%s\nhost in unshare -Urn:\n%s", in.Stdout, host.Stdout, capable.Stdout)

	mptcpOn := readSysctl("/proc/sys/net/mptcp/enabled") == "1"
	tfoClient := false
	if v, err := strconv.Atoi(readSysctl("/proc/sys/net/ipv4/tcp_fastopen")); err == nil {
		tfoClient = v&1 != 0
	}

	type check struct {
		name string
		// control is the map holding the positive control.
		control map[string]string
		// skip, when not empty, is why the host cannot give a control.
		skip string
	}
	denied := []check{
		{name: "udp4-socket", control: hostM},          // E3
		{name: "udp6-socket", control: hostM},          // E3
		{name: "udp4-socket-cloexec", control: hostM},  // E3
		{name: "udp-send", control: hostM},             // E3: the datagram arrives on the host
		{name: "dns-udp-query", control: hostM},        // DNS to a resolver on the host's loopback
		{name: "icmp-ping-socket", control: hostM},     // host: EACCES (ping_group_range) or OK
		{name: "raw-socket", control: capM},            // E4
		{name: "raw6-socket", control: capM},           // E4
		{name: "packet-socket", control: capM},         // E4
		{name: "netlink-route-socket", control: hostM}, // kernel allows it unprivileged
		{name: "vsock-socket", control: hostM},         // host: OK, or EAFNOSUPPORT without vsock
		{name: "inet-socketpair", control: hostM},      // kernel: EOPNOTSUPP; seccomp: EPERM
		{name: "mptcp-socket", control: hostM, skip: skipIf(!mptcpOn, "net.mptcp.enabled is not 1 on this host")},
		{name: "mptcp6-socket", control: hostM, skip: skipIf(!mptcpOn, "net.mptcp.enabled is not 1 on this host")},
		{name: "tfo-sendto", control: hostM, skip: skipIf(!tfoClient, "net.ipv4.tcp_fastopen has no client bit on this host")},
		{name: "tfo-sendmsg", control: hostM, skip: skipIf(!tfoClient, "net.ipv4.tcp_fastopen has no client bit on this host")},
		{name: "tfo-connect-setsockopt", control: hostM},
	}
	for _, c := range denied {
		t.Run("denied/"+c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			got := verdict(t, inM, c.name, in)
			if !errnoIs(got, ePERM) {
				t.Errorf("sandbox: %s: got %q, want ERRNO %d (EPERM)", c.name, got, ePERM)
			}
			ctl := verdict(t, c.control, c.name, host)
			if errnoIs(ctl, ePERM) {
				t.Errorf("control: %s answers EPERM outside the sandbox too (%q), so the probe proves nothing", c.name, ctl)
			}
		})
	}

	allowed := []string{
		"tcp4-socket",             // E5: socket() itself is allowed
		"tcp4-socket-ipproto-tcp", // E5
		"tcp6-socket",             // E5
		"unix-stream-socket",
		"unix-dgram-socket",
		"unix-socketpair",
		"tcp-nodelay-setsockopt",
		"getaddrinfo-localhost", // /etc/hosts still works
	}
	for _, name := range allowed {
		t.Run("allowed/"+name, func(t *testing.T) {
			if got := verdict(t, inM, name, in); !isOK(got) {
				t.Errorf("sandbox: %s: got %q, want OK", name, got)
			}
		})
	}

	t.Run("reached-host", func(t *testing.T) {
		if inTCP != 0 || inUDP != 0 || inDNS != 0 {
			t.Errorf("host listeners heard from the sandbox: tcp=%d udp=%d dns=%d\n%s", inTCP, inUDP, inDNS, in)
		}
		if udp.received() == 0 {
			t.Errorf("control: the host's own datagram never reached the UDP sink: %s", host)
		}
		if dns.received() == 0 || verdict(t, hostM, "dns-udp-query", host) != "OK 127.0.0.1" {
			t.Errorf("control: the host's DNS query got no answer from the fake resolver: %s", host)
		}
		if tfoClient && tcpAccepted.Load() == 0 {
			t.Errorf("control: the host's TCP Fast Open sends never reached the listener: %s", host)
		}
	})

	t.Run("getaddrinfo-example.com", func(t *testing.T) {
		// No real resolver is reachable from this host either, so this
		// case alone proves little; dns-udp-query above is the control.
		if got := verdict(t, inM, "getaddrinfo-example.com", in); isOK(got) {
			t.Errorf("sandbox resolved example.com: %q", got)
		}
	})
}

func skipIf(cond bool, why string) string {
	if cond {
		return why
	}
	return ""
}

// TestNetworkNoProxyAdvertised (G7): proxy variables of the caller never
// reach the sandbox, so code inside is not told where a way out might be.
func TestNetworkNoProxyAdvertised(t *testing.T) {
	vars := []string{
		"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY",
		"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy",
	}
	for _, v := range vars {
		t.Setenv(v, "http://127.0.0.1:3128/moat-proxy-"+v)
	}
	sb := newSandbox(t, moat.Config{})
	in := inSandbox(t, sb, "env")
	host := onHost(t, "env")
	for _, v := range vars {
		t.Run(v, func(t *testing.T) {
			if strings.Contains(in.Stdout, v+"=") || strings.Contains(in.Stdout, "moat-proxy-"+v) {
				t.Errorf("%s is set inside the sandbox:\n%s", v, in.Stdout)
			}
			if !strings.Contains(host.Stdout, v+"=http://127.0.0.1:3128/moat-proxy-"+v) {
				t.Errorf("control: %s is not set on the host:\n%s", v, host.Stdout)
			}
		})
	}
}

// TestNetworkSandboxOwnLoopbackWorks: a TCP server the sandboxed code
// starts on its own loopback is reachable by that code (the sandbox stays
// usable for local servers and tests).
func TestNetworkSandboxOwnLoopbackWorks(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	needNamespaces(t, sb)
	for _, tc := range []struct{ name, addr string }{
		{"ipv4", "127.0.0.1"},
		{"ipv6", "::1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			prog := `
import socket, sys, threading
addr = sys.argv[1]
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
srv = socket.socket(fam, socket.SOCK_STREAM)
srv.bind((addr, 0)); srv.listen(1)
port = srv.getsockname()[1]
def serve():
    c, _ = srv.accept(); c.sendall(b"inner-pong"); c.close()
th = threading.Thread(target=serve); th.start()
cl = socket.create_connection((addr, port), timeout=5)
print(cl.recv(32).decode()); cl.close(); th.join()
`
			r := inSandbox(t, sb, "python3", "-c", prog, tc.addr)
			if r.Err != nil {
				t.Fatalf("own loopback server failed: %s", r)
			}
			mustContain(t, r, "inner-pong")
		})
	}
}

// TestNetworkNamespaceOnlyLo: the sandbox's network namespace has only lo.
func TestNetworkNamespaceOnlyLo(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	needNamespaces(t, sb)
	ifaces := func(dev string) []string {
		var out []string
		for _, line := range strings.Split(dev, "\n") {
			if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
				out = append(out, strings.TrimSpace(name))
			}
		}
		return out
	}
	in := inSandbox(t, sb, "cat", "/proc/net/dev")
	if in.Err != nil {
		t.Fatalf("cat /proc/net/dev: %s", in)
	}
	got := ifaces(in.Stdout)
	if len(got) != 1 || got[0] != "lo" {
		t.Fatalf("sandbox sees interfaces %q, want only lo:\n%s", got, in.Stdout)
	}
	hostDev, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	hostIfaces := ifaces(string(hostDev))
	if len(hostIfaces) < 2 {
		t.Skipf("host itself has only %q, so there is no control", hostIfaces)
	}
	t.Logf("sandbox: %q; host: %q", got, hostIfaces)
}
