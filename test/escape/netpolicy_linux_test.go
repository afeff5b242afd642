//go:build linux

package escape_test

// Network policies: with a policy other than deny-all, the sandbox's only
// way out is its policy proxy. These tests attack that: they go around the
// proxy (direct connects, UDP, raw sockets, MPTCP, TCP Fast Open), at the
// proxy without its credential, and through it to what the policy does not
// allow; and they use it as real clients do (curl over HTTP, CONNECT and
// SOCKS5, Python, git, pip), checking every audit line. Every target is a
// server this test starts on the host's loopback.

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// localhostOK is what a sandbox needs to reach the test servers by the name
// localhost: the proxy refuses loopback unless AllowLocal lists it.
var localhostOK = []string{"127.0.0.1/32", "::1/128"}

// TestNetPolicyDenyAllHasNoWayOut (G6, G7): every policy that denies
// everything runs no proxy: no proxy URL, no proxy variable, and a host
// loopback server, by address or by name, stays out of reach. The control
// is the host, which reaches the same server with the same curl.
func TestNetPolicyDenyAllHasNoWayOut(t *testing.T) {
	t.Parallel()
	need(t, "curl")
	dir := t.TempDir()
	log, err := moat.OpenAuditLog(dir + "/audit.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	proxyVars := []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
		"all_proxy", "no_proxy", "npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY",
		"YARN_HTTPS_PROXY", "PIP_PROXY", "CARGO_HTTP_PROXY", "GLOBAL_AGENT_HTTP_PROXY"}

	t.Run("policies", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			policy moat.NetworkPolicy
		}{
			{"nil", nil},
			{"DenyAll", moat.DenyAll()},
			{"empty AllowList", allowList(t)},
			{"Audited DenyAll", moat.Audited(moat.DenyAll(), log)},
			{"Audited empty AllowList", moat.Audited(allowList(t), log)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				sb := newSandbox(t, moat.Config{Network: tc.policy})
				target := newHTTPTarget(t, "moat-g6-pong\n", false)
				t.Run("G7/ProxyURL", func(t *testing.T) {
					if u := sb.ProxyURL(); u != "" {
						t.Fatalf("ProxyURL() = %q without network access, want \"\"", u)
					}
				})
				t.Run("G7/env", func(t *testing.T) {
					in := inSandbox(t, sb, "env")
					if in.Err != nil {
						t.Fatalf("env: %s", in)
					}
					for _, v := range proxyVars {
						if strings.Contains(in.Stdout, "\n"+v+"=") || strings.HasPrefix(in.Stdout, v+"=") {
							t.Errorf("%s is set in the sandbox:\n%s", v, in.Stdout)
						}
					}
				})
				for _, url := range []string{
					"http://127.0.0.1:" + strconv.Itoa(target.port) + "/",
					"http://localhost:" + strconv.Itoa(target.port) + "/",
				} {
					t.Run("G6/"+url, func(t *testing.T) {
						before := target.conns.Load()
						script := "curl -sS --max-time 5 " + url + " || echo BLOCKED"
						in := sh(t, sb, script)
						mustContain(t, in, "BLOCKED")
						mustNotContain(t, in, "moat-g6-pong")
						if n := target.conns.Load() - before; n != 0 {
							t.Fatalf("the host server accepted %d connection(s) from the sandbox: %s", n, in)
						}
						host := hostSh(t, script)
						mustContain(t, host, "moat-g6-pong")
					})
				}
			})
		}
	})
	t.Run("nothing audited", func(t *testing.T) {
		if lines := readAudit(t, dir+"/audit.jsonl"); len(lines) != 0 {
			t.Fatalf("a policy that runs no proxy wrote %d audit line(s)", len(lines))
		}
	})
}

// TestNetPolicyProxyEnvironment (I10): with a proxy, every variable that
// sends clients to it is set, to sb.ProxyURL() or its SOCKS5 form, and the
// caller's own proxy variables cannot replace them. The control is the
// host, where the caller's values are set.
func TestNetPolicyProxyEnvironment(t *testing.T) {
	// Not parallel: t.Setenv.
	decoy := "http://decoy.invalid:3128"
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy", "PIP_PROXY"} {
		t.Setenv(v, decoy)
	}
	sb := newSandbox(t, moat.Config{Network: moat.AllowAll()})
	u := sb.ProxyURL()
	if !strings.HasPrefix(u, "http://moat:") || !strings.Contains(u, "@127.0.0.1:") {
		t.Fatalf("ProxyURL() = %q, want http://moat:TOKEN@127.0.0.1:PORT", u)
	}
	socks := "socks5h://" + strings.TrimPrefix(u, "http://")
	want := map[string]string{
		"HTTP_PROXY": u, "HTTPS_PROXY": u, "http_proxy": u, "https_proxy": u,
		"ALL_PROXY": socks, "all_proxy": socks,
		"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
		"npm_config_proxy": u, "npm_config_https_proxy": u,
		"YARN_HTTP_PROXY": u, "YARN_HTTPS_PROXY": u,
		"PIP_PROXY": u, "CARGO_HTTP_PROXY": u,
		"GLOBAL_AGENT_HTTP_PROXY": u,
	}
	in := inSandbox(t, sb, "env")
	if in.Err != nil {
		t.Fatalf("env: %s", in)
	}
	got := map[string]string{}
	for _, line := range strings.Split(in.Stdout, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	for k, v := range want {
		t.Run(k, func(t *testing.T) {
			if got[k] != v {
				t.Errorf("%s = %q in the sandbox, want %q", k, got[k], v)
			}
		})
	}
	t.Run("I10/echo", func(t *testing.T) {
		r := sh(t, sb, `printf %s "$HTTP_PROXY"`)
		if r.Stdout != u {
			t.Fatalf("$HTTP_PROXY = %q, ProxyURL() = %q", r.Stdout, u)
		}
		if host := hostSh(t, `printf %s "$HTTP_PROXY"`); host.Stdout != decoy {
			t.Fatalf("control: the host's HTTP_PROXY is %q, want the decoy", host.Stdout)
		}
	})
}

// socketsWithProxyProbe tries every way around the proxy of a sandbox that
// has one. argv: host TCP port, host UDP sink port.
const socketsWithProxyProbe = `
tcp_port, udp_port = int(sys.argv[1]), int(sys.argv[2])
def mk(fam, typ, proto=0):
    def f():
        s = socket.socket(fam, typ, proto)
        s.close()
        return "created"
    return f
def connect(fam, host, proto=0):
    def f():
        s = socket.socket(fam, socket.SOCK_STREAM, proto)
        s.settimeout(5)
        s.connect((host, tcp_port))
        d = s.recv(16)
        s.close()
        return d.decode()
    return f
probe("E3-udp4-socket", mk(socket.AF_INET, socket.SOCK_DGRAM))
probe("E3-udp6-socket", mk(socket.AF_INET6, socket.SOCK_DGRAM))
probe("E4-raw-socket", mk(socket.AF_INET, socket.SOCK_RAW, 255))
probe("E4-packet-socket", mk(17, socket.SOCK_RAW, 0))
probe("E5-tcp4-socket", mk(socket.AF_INET, socket.SOCK_STREAM))
probe("E5-tcp6-socket", mk(socket.AF_INET6, socket.SOCK_STREAM))
probe("E6-connect-127.0.0.1", connect(socket.AF_INET, "127.0.0.1"))
probe("E6-connect-v4mapped", connect(socket.AF_INET6, "::ffff:127.0.0.1"))
probe("E6-connect-localhost", connect(socket.AF_INET, "localhost"))
probe("E6-mptcp-connect", connect(socket.AF_INET, "127.0.0.1", 262))
def tfo():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    n = s.sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("127.0.0.1", tcp_port))
    s.close()
    return n
probe("E6-tfo-sendto", tfo)
def udp_send():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    n = s.sendto(b"moat-udp-datagram", ("127.0.0.1", udp_port))
    s.close()
    return n
probe("E6-udp-sendto", udp_send)
`

// viaProxyProbe reaches argv[1]:argv[2] through the sandbox's proxy with a
// hand-made CONNECT carrying the credential from $HTTP_PROXY, and prints
// what the far end sent.
const viaProxyProbe = `
import base64, urllib.parse
def via_proxy():
    u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
    s = socket.create_connection((u.hostname, u.port), timeout=5)
    cred = base64.b64encode(("%s:%s" % (u.username, u.password)).encode()).decode()
    target = "%s:%s" % (sys.argv[1], sys.argv[2])
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n" % (target, target, cred)).encode())
    data = b""
    while b"\r\n\r\n" not in data:
        c = s.recv(4096)
        if not c:
            break
        data += c
    head, _, rest = data.partition(b"\r\n\r\n")
    status = head.split(b"\r\n")[0].decode()
    while len(rest) < 4:
        c = s.recv(4096)
        if not c:
            break
        rest += c
    s.close()
    return "%s | %s" % (status, rest.decode())
probe("via-proxy", via_proxy)
`

// TestNetPolicySocketsWithProxy (E3, E4, E5, E6): a sandbox with a proxy
// still cannot create UDP, raw or packet sockets, and its TCP sockets reach
// nothing but the proxy: a direct connect to a host loopback listener (by
// address, IPv4-mapped address or name), an MPTCP connect, a TCP Fast Open
// sendto and a UDP datagram to a host sink all fail. Controls: the host runs
// the same probe (raw and packet sockets in its own user namespace) and
// succeeds, and the sandbox reaches the same listener through the proxy.
func TestNetPolicySocketsWithProxy(t *testing.T) {
	t.Parallel()
	needUnshare(t)
	p := newProxied(t, allowList(t, "localhost"), localhostOK...)
	needNamespaces(t, p.sb)
	tcpPort, accepted := pongServer(t, "tcp4", "127.0.0.1:0")
	udp := newUDPSink(t, "127.0.0.1:0", false)
	args := []string{strconv.Itoa(tcpPort), strconv.Itoa(udp.port())}

	in := pyIn(t, p.sb, socketsWithProxyProbe, args...)
	inM := probes(in)
	inTCP, inUDP := accepted.Load(), udp.received()

	host := pyHost(t, nil, socketsWithProxyProbe, args...)
	hostM := probes(host)
	capable := pyHost(t, []string{"unshare", "-Urn"}, socketsWithProxyProbe, args...)
	capM := probes(capable)
	t.Logf("sandbox:\n%s\nhost:\n%s\nhost in unshare -Urn:\n%s", in.Stdout, host.Stdout, capable.Stdout)

	mptcpOn := readSysctl("/proc/sys/net/mptcp/enabled") == "1"
	tfoClient := false
	if v, err := strconv.Atoi(readSysctl("/proc/sys/net/ipv4/tcp_fastopen")); err == nil {
		tfoClient = v&1 != 0
	}
	for _, c := range []struct {
		name    string
		eperm   bool // the sandbox must get exactly EPERM, not just a failure
		control map[string]string
		want    string // the control's verdict
		skip    string
	}{
		{name: "E3-udp4-socket", eperm: true, control: hostM, want: "OK created"},
		{name: "E3-udp6-socket", eperm: true, control: hostM, want: "OK created"},
		{name: "E4-raw-socket", eperm: true, control: capM, want: "OK created"},
		{name: "E4-packet-socket", eperm: true, control: capM, want: "OK created"},
		{name: "E6-connect-127.0.0.1", control: hostM, want: "OK pong"},
		{name: "E6-connect-v4mapped", control: hostM, want: "OK pong", skip: skipIf(!hostHasIPv6Loopback(), "host has no IPv6")},
		{name: "E6-connect-localhost", control: hostM, want: "OK pong"},
		{name: "E6-mptcp-connect", eperm: true, control: hostM, want: "OK pong", skip: skipIf(!mptcpOn, "net.mptcp.enabled is not 1 on this host")},
		{name: "E6-tfo-sendto", eperm: true, control: hostM, want: "OK 18", skip: skipIf(!tfoClient, "net.ipv4.tcp_fastopen has no client bit on this host")},
		{name: "E6-udp-sendto", eperm: true, control: hostM, want: "OK 17"},
	} {
		t.Run("denied/"+c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip("SKIPPING: " + c.skip)
			}
			got := verdict(t, inM, c.name, in)
			if isOK(got) || strings.Contains(got, "pong") {
				t.Errorf("sandbox: %s succeeded: %q", c.name, got)
			}
			if c.eperm && !errnoIs(got, ePERM) {
				t.Errorf("sandbox: %s: got %q, want ERRNO %d (EPERM)", c.name, got, ePERM)
			}
			if ctl := verdict(t, c.control, c.name, host); ctl != c.want {
				t.Errorf("control: %s gives %q outside the sandbox, want %q, so the probe proves nothing", c.name, ctl, c.want)
			}
		})
	}
	for _, name := range []string{"E5-tcp4-socket", "E5-tcp6-socket"} {
		t.Run("allowed/"+name, func(t *testing.T) {
			if got := verdict(t, inM, name, in); got != "OK created" {
				t.Errorf("sandbox: %s: got %q, want OK created", name, got)
			}
		})
	}
	t.Run("reached-host", func(t *testing.T) {
		if inTCP != 0 || inUDP != 0 {
			t.Errorf("host listeners heard from the sandbox around its proxy: tcp=%d udp=%d\n%s", inTCP, inUDP, in)
		}
		if udp.received() == 0 {
			t.Errorf("control: the host's own datagram never reached the UDP sink: %s", host)
		}
	})
	// Nothing the probe did went through the proxy, so nothing is audited.
	p.expect(t)

	t.Run("control/via-proxy", func(t *testing.T) {
		before := accepted.Load()
		r := pyIn(t, p.sb, viaProxyProbe, "localhost", strconv.Itoa(tcpPort))
		got := verdict(t, probes(r), "via-proxy", r)
		if !strings.HasPrefix(got, "OK HTTP/1.1 200") || !strings.HasSuffix(got, "| pong") {
			t.Fatalf("the sandbox could not reach the listener through its proxy: %q\n%s", got, r)
		}
		if n := accepted.Load() - before; n != 1 {
			t.Fatalf("listener accepted %d connection(s) through the proxy, want 1", n)
		}
		p.expect(t, wantAudit{"connect", "localhost", tcpPort, true, loopbackIPs, `matches "localhost"`})
	})
}

// reachProxyProbe connects to argv[1]:argv[2], sends an HTTP request
// without any credential, and prints the first line it gets back.
const reachProxyProbe = `
def reach():
    host, port = sys.argv[1], int(sys.argv[2])
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect((host, port))
    s.sendall(b"GET http://localhost/ HTTP/1.1\r\nHost: localhost\r\n\r\n")
    d = b""
    while b"\n" not in d:
        c = s.recv(256)
        if not c:
            break
        d += c
    s.close()
    return d.split(b"\n")[0].decode().strip()
probe("reach", reach)
`

// TestNetPolicyProxyListenerIsPrivate: with namespaces the proxy listens on
// the sandbox's own loopback only. The host cannot connect to the proxy's
// port, and the sandbox reaches the proxy at 127.0.0.1:PORT but nothing
// else at that port number: a host listener put on 127.0.0.1:PORT and
// [::1]:PORT hears nothing from the sandbox, which still gets its proxy
// there. The control is the host, which reaches its own listener.
func TestNetPolicyProxyListenerIsPrivate(t *testing.T) {
	t.Parallel()
	p := newProxied(t, moat.AllowAll(), localhostOK...)
	needNamespaces(t, p.sb)
	if r := inSandbox(t, p.sb, "true"); r.Err != nil { // the proxy listens once the sandbox runs
		t.Fatalf("true: %s", r)
	}
	port := proxyPort(t, p.sb)
	portS := strconv.Itoa(port)

	t.Run("host cannot reach the proxy", func(t *testing.T) {
		for _, addr := range []string{"127.0.0.1:" + portS, "[::1]:" + portS} {
			if refused, err := dialRefused(addr); !refused {
				t.Fatalf("the host connected to %s, the sandbox's proxy port", addr)
			} else {
				t.Logf("host -> %s: %v", addr, err)
			}
		}
	})

	decoy4, acc4 := pongServer(t, "tcp4", "127.0.0.1:"+portS)
	if decoy4 != port {
		t.Fatalf("decoy on port %d, want %d", decoy4, port)
	}
	var acc6 *atomic.Int32
	if hostHasIPv6Loopback() {
		_, acc6 = pongServer(t, "tcp6", "[::1]:"+portS)
	}

	t.Run("sandbox reaches its own proxy at 127.0.0.1:PORT", func(t *testing.T) {
		r := pyIn(t, p.sb, reachProxyProbe, "127.0.0.1", portS)
		got := verdict(t, probes(r), "reach", r)
		if got != "OK HTTP/1.1 407 Proxy Authentication Required" {
			t.Fatalf("sandbox -> 127.0.0.1:%d: %q, want the proxy's 407", port, got)
		}
	})
	for _, addr := range []string{"::1", "127.0.0.2", "::ffff:127.0.0.2"} {
		t.Run("sandbox -> "+addr, func(t *testing.T) {
			r := pyIn(t, p.sb, reachProxyProbe, addr, portS)
			if got := verdict(t, probes(r), "reach", r); isOK(got) {
				t.Fatalf("sandbox reached something at [%s]:%d: %q", addr, port, got)
			}
		})
	}
	t.Run("decoys heard nothing", func(t *testing.T) {
		if n := acc4.Load(); n != 0 {
			t.Fatalf("host listener on 127.0.0.1:%d accepted %d connection(s) from the sandbox", port, n)
		}
		if acc6 != nil && acc6.Load() != 0 {
			t.Fatalf("host listener on [::1]:%d accepted %d connection(s) from the sandbox", port, acc6.Load())
		}
		host := pyHost(t, nil, connectProbe, "127.0.0.1", portS)
		if v := verdict(t, probes(host), "connect", host); v != "OK pong" {
			t.Fatalf("control: host could not reach its own listener on port %d: %q", port, v)
		}
	})
	p.expect(t) // the 407s come before any decision: nothing audited
}

// clientCase is one client using the proxy. script is a shell command run
// in the sandbox, in which {HOST} and {PORT} stand for the target.
type clientCase struct {
	name     string
	protocol string // the audit line's protocol
	tls      bool   // the target speaks HTTPS
	script   string
	// parse turns the client's output into an HTTP-like status ("200",
	// "403", "refused" for a failed SOCKS5 connect) and the body.
	parse func(t *testing.T, r result) (status, body string)
}

const pyClient = `
import os, ssl, sys, urllib.error, urllib.request
proxy = os.environ["HTTP_PROXY"]
opener = urllib.request.build_opener(
    urllib.request.ProxyHandler({"http": proxy, "https": proxy}),
    urllib.request.HTTPSHandler(context=ssl._create_unverified_context()))
try:
    r = opener.open(sys.argv[1], timeout=10)
    print("STATUS %d" % r.status)
    sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print("STATUS %d" % e.code)
    sys.stdout.write(e.read().decode())
except OSError as e:
    print("ERROR %s" % e)
`

func parseCurl(t *testing.T, r result) (string, string) {
	c := curlParse(t, r)
	switch {
	case c.connect != "000" && c.connect != "200":
		return c.connect, c.body
	case c.code != "000":
		return c.code, c.body
	case c.exit == "97":
		return "refused", c.body
	}
	return "curl exit " + c.exit, c.body
}

func parsePy(t *testing.T, r result) (string, string) {
	first, rest, _ := strings.Cut(r.Stdout, "\n")
	switch {
	case strings.HasPrefix(first, "STATUS "):
		return strings.TrimPrefix(first, "STATUS "), rest
	case strings.Contains(first, "Tunnel connection failed: "):
		_, code, _ := strings.Cut(first, "Tunnel connection failed: ")
		return strings.Fields(code)[0], ""
	}
	return "python: " + first + r.Stderr, ""
}

func clientCases() []clientCase {
	curl := "curl -sS --max-time 10 " + curlFmt + " --noproxy '' "
	return []clientCase{
		{name: "curl-http", protocol: "http", parse: parseCurl,
			script: curl + `-x "$HTTP_PROXY" http://{HOST}:{PORT}/; echo EXIT=$?`},
		{name: "curl-connect", protocol: "connect", parse: parseCurl,
			script: curl + `-p -x "$HTTP_PROXY" http://{HOST}:{PORT}/; echo EXIT=$?`},
		{name: "curl-connect-https", protocol: "connect", tls: true, parse: parseCurl,
			script: curl + `-k -x "$HTTP_PROXY" https://{HOST}:{PORT}/; echo EXIT=$?`},
		{name: "curl-socks5h-all-proxy", protocol: "socks5", parse: parseCurl,
			script: curl + `--proxy "$ALL_PROXY" http://{HOST}:{PORT}/; echo EXIT=$?`},
		{name: "curl-socks5-hostname", protocol: "socks5", parse: parseCurl,
			script: curl + `--socks5-hostname "${ALL_PROXY#socks5h://}" http://{HOST}:{PORT}/; echo EXIT=$?`},
		{name: "curl-socks5-https", protocol: "socks5", tls: true, parse: parseCurl,
			script: curl + `-k --proxy "$ALL_PROXY" https://{HOST}:{PORT}/; echo EXIT=$?`},
		{name: "python-urllib-http", protocol: "http", parse: parsePy,
			script: `no_proxy= NO_PROXY= python3 -c '` + pyClient + `' http://{HOST}:{PORT}/`},
		{name: "python-urllib-connect", protocol: "connect", tls: true, parse: parsePy,
			script: `no_proxy= NO_PROXY= python3 -c '` + pyClient + `' https://{HOST}:{PORT}/`},
	}
}

// TestNetPolicyClientsThroughProxy: real clients (curl over HTTP, CONNECT
// and SOCKS5; Python's urllib over HTTP and CONNECT) reach a host loopback
// server through the proxy when the allow-list names it and AllowLocal lets
// the proxy dial loopback, and are refused, with a one-line 403 naming the
// policy (a failed SOCKS5 connect), when the allow-list does not name it.
// Every decision is one audit line with the protocol, host, port, decision,
// reason and the IP dialed. The positive control of each refusal is the
// same client in the allowing sandbox.
func TestNetPolicyClientsThroughProxy(t *testing.T) {
	t.Parallel()
	need(t, "curl", "python3")
	plain := newHTTPTarget(t, "moat-proxy-pong\n", false)
	secure := newHTTPTarget(t, "moat-proxy-pong\n", true)
	allow := newProxied(t, allowList(t, "localhost"), localhostOK...)
	deny := newProxied(t, allowList(t, "only-this.invalid"), localhostOK...)

	for _, tc := range clientCases() {
		target := plain
		if tc.tls {
			target = secure
		}
		script := strings.NewReplacer("{HOST}", "localhost", "{PORT}", strconv.Itoa(target.port)).Replace(tc.script)
		t.Run(tc.name+"/allowed", func(t *testing.T) {
			before := target.hits.Load()
			status, body := tc.parse(t, sh(t, allow.sb, script))
			if status != "200" || body != "moat-proxy-pong\n" {
				t.Fatalf("got %s %q, want 200 and the server's body", status, body)
			}
			if n := target.hits.Load() - before; n != 1 {
				t.Fatalf("server saw %d request(s), want 1", n)
			}
			allow.expect(t, wantAudit{tc.protocol, "localhost", target.port, true, loopbackIPs, `matches "localhost"`})
		})
		t.Run(tc.name+"/denied", func(t *testing.T) {
			before, beforeConns := target.hits.Load(), target.conns.Load()
			r := sh(t, deny.sb, script)
			status, body := tc.parse(t, r)
			switch tc.protocol {
			case "socks5":
				if status != "refused" {
					t.Fatalf("SOCKS5: got %s %q, want a refused connect: %s", status, body, r)
				}
			default:
				if status != "403" {
					t.Fatalf("got %s %q, want 403: %s", status, body, r)
				}
				if tc.protocol == "http" {
					refusalLine(t, curlResult{body: body, r: r}, "allow-list", "localhost")
				}
			}
			if strings.Contains(r.Stdout, "moat-proxy-pong") {
				t.Fatalf("the body of the denied server came through: %s", r)
			}
			if n, c := target.hits.Load()-before, target.conns.Load()-beforeConns; n != 0 || c != 0 {
				t.Fatalf("server saw %d request(s) and %d connection(s) from a denied client", n, c)
			}
			deny.expect(t, wantAudit{tc.protocol, "localhost", target.port, false, nil, "not on the allow list"})
		})
	}
}

// TestNetPolicyLocalAddressesRefused (SSRF): a policy that allows every
// host still does not let the proxy dial the host's loopback, by name or
// by any spelling of a loopback or unspecified address, over HTTP, CONNECT
// and SOCKS5, unless AllowLocal lists it; an allow-list that names
// 127.0.0.1 itself is explicit consent. Each refusal is audited with the
// address refused. The control is the same request from a sandbox whose
// AllowLocal lists loopback (or whose allow-list names the address).
func TestNetPolicyLocalAddressesRefused(t *testing.T) {
	t.Parallel()
	need(t, "curl")
	target := newHTTPTarget(t, "moat-ssrf-pong\n", false)
	refused := newProxied(t, moat.AllowAll())
	allowed := newProxied(t, moat.AllowAll(), "127.0.0.0/8", "::1/128", "0.0.0.0/32")
	port := target.port
	curl := "--noproxy '' "

	for _, tc := range []struct {
		name, args, protocol, host, ip, reason string
		v6                                     bool
	}{
		{"http-localhost", `-x "$HTTP_PROXY" http://localhost:%d/`, "http", "localhost", "", "a loopback address", false},
		{"http-127.0.0.1", `-x "$HTTP_PROXY" http://127.0.0.1:%d/`, "http", "127.0.0.1", "127.0.0.1", "127.0.0.1 is a loopback address", false},
		{"http-127.1.2.3", `-x "$HTTP_PROXY" http://127.1.2.3:%d/`, "http", "127.1.2.3", "127.1.2.3", "127.1.2.3 is a loopback address", false},
		{"http-0.0.0.0", `-x "$HTTP_PROXY" http://0.0.0.0:%d/`, "http", "0.0.0.0", "0.0.0.0", "0.0.0.0 is an unspecified address", false},
		{"http-v4mapped", `-g -x "$HTTP_PROXY" http://[::ffff:127.0.0.1]:%d/`, "http", "::ffff:127.0.0.1", "::ffff:127.0.0.1", "IPv4-mapped", true},
		{"http-::1", `-g -x "$HTTP_PROXY" http://[::1]:%d/`, "http", "::1", "::1", "::1 is a loopback address", true},
		{"connect-localhost", `-p -x "$HTTP_PROXY" http://localhost:%d/`, "connect", "localhost", "", "a loopback address", false},
		{"connect-127.0.0.1", `-p -x "$HTTP_PROXY" http://127.0.0.1:%d/`, "connect", "127.0.0.1", "127.0.0.1", "127.0.0.1 is a loopback address", false},
		{"socks5-localhost", `--proxy "$ALL_PROXY" http://localhost:%d/`, "socks5", "localhost", "", "a loopback address", false},
		{"socks5-127.0.0.1", `--proxy "$ALL_PROXY" http://127.0.0.1:%d/`, "socks5", "127.0.0.1", "127.0.0.1", "127.0.0.1 is a loopback address", false},
		{"socks5-0.0.0.0", `--proxy "$ALL_PROXY" http://0.0.0.0:%d/`, "socks5", "0.0.0.0", "0.0.0.0", "an unspecified address", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.v6 && !hostHasIPv6Loopback() {
				t.Skip("SKIPPING: host has no IPv6 loopback")
			}
			args := curl + fmt.Sprintf(tc.args, port)
			before, beforeConns := target.hits.Load(), target.conns.Load()
			r := sh(t, refused.sb, "curl -sS --max-time 10 "+curlFmt+" "+args+"; echo EXIT=$?")
			status, body := parseCurl(t, r)
			want := "403"
			if tc.protocol == "socks5" {
				want = "refused"
			}
			if status != want {
				t.Fatalf("got %s %q, want %s: %s", status, body, want, r)
			}
			if tc.protocol == "http" {
				refusalLine(t, curlResult{body: body, r: r}, "allow-all", tc.host)
			}
			if n, c := target.hits.Load()-before, target.conns.Load()-beforeConns; n != 0 || c != 0 {
				t.Fatalf("loopback server saw %d request(s), %d connection(s)", n, c)
			}
			ips := []string{tc.ip}
			if tc.ip == "" {
				ips = loopbackIPs
			}
			refused.expect(t, wantAudit{tc.protocol, tc.host, port, false, ips, tc.reason})

			// Control: the same request with loopback and 0.0.0.0 in
			// AllowLocal. Only addresses a server listens on can answer;
			// the others must at least pass the proxy's checks (an audited
			// allowed line).
			r = sh(t, allowed.sb, "curl -sS --max-time 10 "+curlFmt+" "+args+"; echo EXIT=$?")
			status, body = parseCurl(t, r)
			lines := allowed.expect(t, wantAudit{tc.protocol, tc.host, port, true, append(append([]string(nil), ips...), loopbackIPs...), "every host is allowed"})
			if lines[0].IP == "127.0.0.1" || tc.host == "0.0.0.0" || tc.host == "localhost" {
				if status != "200" || body != "moat-ssrf-pong\n" {
					t.Fatalf("control: got %s %q, want 200: %s", status, body, r)
				}
			}
		})
	}

	t.Run("allow-list naming 127.0.0.1 is explicit consent", func(t *testing.T) {
		explicit := newProxied(t, allowList(t, "127.0.0.1"))
		r := sh(t, explicit.sb, "curl -sS --max-time 10 "+curlFmt+" "+curl+fmt.Sprintf(`-x "$HTTP_PROXY" http://127.0.0.1:%d/`, port)+"; echo EXIT=$?")
		if status, body := parseCurl(t, r); status != "200" || body != "moat-ssrf-pong\n" {
			t.Fatalf("got %s %q, want 200: %s", status, body, r)
		}
		explicit.expect(t, wantAudit{"http", "127.0.0.1", port, true, []string{"127.0.0.1"}, `matches "127.0.0.1"`})
		// ...but not for the name localhost, which the list does not name,
		// nor for 127.0.0.2, which it does not list.
		for _, host := range []string{"localhost", "127.0.0.2"} {
			r := sh(t, explicit.sb, "curl -sS --max-time 10 "+curlFmt+" "+curl+fmt.Sprintf(`-x "$HTTP_PROXY" http://%s:%d/`, host, port)+"; echo EXIT=$?")
			status, body := parseCurl(t, r)
			if status != "403" {
				t.Fatalf("%s: got %s %q, want 403", host, status, body)
			}
			refusalLine(t, curlResult{body: body, r: r}, "allow-list", host)
			explicit.expect(t, wantAudit{"http", host, port, false, nil, "not on the allow list"})
		}
	})
}

// TestNetPolicyCredential: the proxy answers only clients that present the
// sandbox's credential. From inside the sandbox, HTTP and CONNECT without
// it, with a wrong password or a wrong user get 407 and SOCKS5 without it
// or with a wrong one is rejected; none of that reaches the server or the
// audit log. The control is the same request with the credential.
func TestNetPolicyCredential(t *testing.T) {
	t.Parallel()
	need(t, "curl")
	target := newHTTPTarget(t, "moat-cred-pong\n", false)
	p := newProxied(t, allowList(t, "localhost"), localhostOK...)
	url := fmt.Sprintf("http://localhost:%d/", target.port)
	tok := `"$(echo "$HTTP_PROXY" | sed 's|^http://moat:||; s|@.*||')"`
	hp := `"127.0.0.1:${HTTP_PROXY##*:}"`
	for _, tc := range []struct{ name, proxy, flags, want string }{
		{"http-none", `"http://"` + hp, "", "407"},
		{"http-wrong-password", `"http://moat:wrong@"` + hp, "", "407"},
		{"http-wrong-user", `"http://root:"` + tok + `"@"` + hp, "", "407"},
		{"http-empty-password", `"http://moat:@"` + hp, "", "407"},
		{"connect-none", `"http://"` + hp, "-p", "407"},
		{"connect-wrong-password", `"http://moat:wrong@"` + hp, "-p", "407"},
		{"socks5-none", `"socks5h://"` + hp, "", "refused"},
		{"socks5-wrong-password", `"socks5h://moat:wrong@"` + hp, "", "refused"},
		{"socks5-wrong-user", `"socks5h://root:"` + tok + `"@"` + hp, "", "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := target.conns.Load()
			r := sh(t, p.sb, "curl -sS --max-time 10 "+curlFmt+" --noproxy '' "+tc.flags+" -x "+tc.proxy+" "+url+"; echo EXIT=$?")
			status, body := parseCurl(t, r)
			if status != tc.want {
				t.Fatalf("got %s %q, want %s: %s", status, body, tc.want, r)
			}
			if strings.Contains(r.Stdout, "moat-cred-pong") || target.conns.Load() != before {
				t.Fatalf("a client without the credential reached the server: %s", r)
			}
			p.expect(t)
		})
	}
	for _, tc := range []struct{ name, proxy, flags, protocol string }{
		{"control/http", `"$HTTP_PROXY"`, "", "http"},
		{"control/connect", `"$HTTP_PROXY"`, "-p", "connect"},
		{"control/http-rebuilt", `"http://moat:"` + tok + `"@"` + hp, "", "http"},
		{"control/socks5", `"$ALL_PROXY"`, "", "socks5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sh(t, p.sb, "curl -sS --max-time 10 "+curlFmt+" --noproxy '' "+tc.flags+" -x "+tc.proxy+" "+url+"; echo EXIT=$?")
			if status, body := parseCurl(t, r); status != "200" || body != "moat-cred-pong\n" {
				t.Fatalf("got %s %q, want 200: %s", status, body, r)
			}
			p.expect(t, wantAudit{tc.protocol, "localhost", target.port, true, loopbackIPs, `matches "localhost"`})
		})
	}
}

// TestNetPolicyGitClone: git clones over smart HTTP through the proxy from
// a server on the host when the allow-list names it, every request audited
// as allowed, and cannot when it does not. The control is the same clone
// on the host, without a proxy.
func TestNetPolicyGitClone(t *testing.T) {
	t.Parallel()
	need(t, "git")
	srv := newGitServer(t, "moat-git-payload\n")
	url := fmt.Sprintf("http://localhost:%d/git/repo.git", srv.port)
	clone := "no_proxy= NO_PROXY= GIT_TERMINAL_PROMPT=0 git -c http.lowSpeedLimit=1 -c http.lowSpeedTime=10 clone -q " + url + " dst && cat dst/payload.txt"

	t.Run("control/host", func(t *testing.T) {
		dir := t.TempDir()
		r := hostSh(t, "cd "+dir+" && HOME="+dir+" "+clone)
		if r.Err != nil || r.Stdout != "moat-git-payload\n" {
			t.Fatalf("host clone: %s", r)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		p := newProxied(t, allowList(t, "localhost"), localhostOK...)
		before := srv.hits.Load()
		r := sh(t, p.sb, clone)
		if r.Err != nil || r.Stdout != "moat-git-payload\n" {
			t.Fatalf("clone through the proxy: %s", r)
		}
		n := int(srv.hits.Load() - before)
		lines := readAudit(t, p.audit)
		if n < 2 || len(lines) != n {
			t.Fatalf("server saw %d request(s), audit has %d line(s); want one allowed line per request (at least 2)", n, len(lines))
		}
		want := make([]wantAudit, n)
		for i := range want {
			want[i] = wantAudit{"http", "localhost", srv.port, true, loopbackIPs, `matches "localhost"`}
		}
		p.expect(t, want...)
	})
	t.Run("denied", func(t *testing.T) {
		p := newProxied(t, allowList(t, "github.com"), localhostOK...)
		before := srv.hits.Load()
		r := sh(t, p.sb, clone)
		if r.Err == nil || strings.Contains(r.Stdout, "moat-git-payload") {
			t.Fatalf("clone succeeded under an allow-list without the server: %s", r)
		}
		mustContain(t, r, "403")
		if n := srv.hits.Load() - before; n != 0 {
			t.Fatalf("server saw %d request(s) from a denied clone", n)
		}
		p.expect(t, wantAudit{"http", "localhost", srv.port, false, nil, "not on the allow list"})
	})
}

// TestNetPolicyPipDownload: pip downloads a package from a PEP 503 index on
// the host through the proxy (pip reads PIP_PROXY) when the allow-list
// names the index, and cannot when it does not. The control is the same
// download on the host.
func TestNetPolicyPipDownload(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	needPip(t)
	idx := newPipIndex(t)
	pip := fmt.Sprintf("no_proxy= NO_PROXY= python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check "+
		"--no-input --timeout 10 --retries 0 --index-url http://localhost:%d/simple/ %s -d . && ls", idx.port, pipPackage)

	t.Run("control/host", func(t *testing.T) {
		dir := t.TempDir()
		r := hostSh(t, "cd "+dir+" && env -u PIP_PROXY "+pip)
		if r.Err != nil || !strings.Contains(r.Stdout, idx.wheel) {
			t.Fatalf("host pip download: %s", r)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		p := newProxied(t, allowList(t, "localhost"), localhostOK...)
		before := idx.hits.Load()
		r := sh(t, p.sb, pip)
		if r.Err != nil || !strings.Contains(r.Stdout, idx.wheel) {
			t.Fatalf("pip download through the proxy: %s", r)
		}
		n := int(idx.hits.Load() - before)
		if n < 2 {
			t.Fatalf("index saw %d request(s), want the page and the wheel", n)
		}
		want := make([]wantAudit, n)
		for i := range want {
			want[i] = wantAudit{"http", "localhost", idx.port, true, loopbackIPs, `matches "localhost"`}
		}
		p.expect(t, want...)
	})
	t.Run("denied", func(t *testing.T) {
		p := newProxied(t, allowList(t, "pypi.org", "files.pythonhosted.org"), localhostOK...)
		before := idx.hits.Load()
		r := sh(t, p.sb, pip)
		if r.Err == nil || strings.Contains(r.Stdout, idx.wheel) {
			t.Fatalf("pip downloaded under an allow-list without the index: %s", r)
		}
		if n := idx.hits.Load() - before; n != 0 {
			t.Fatalf("index saw %d request(s) from a denied pip", n)
		}
		lines := readAudit(t, p.audit)
		if len(lines) == 0 {
			t.Fatalf("no audit line for the denied download: %s", r)
		}
		want := make([]wantAudit, len(lines))
		for i := range want {
			want[i] = wantAudit{"http", "localhost", idx.port, false, nil, "not on the allow list"}
		}
		p.expect(t, want...)
	})
}

// holdServer accepts connections on the host's loopback, sends "hold",
// and reports when each one is closed by the other side.
func holdServer(t *testing.T) (port int, accepted chan struct{}, closed chan time.Time) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted, closed = make(chan struct{}, 8), make(chan time.Time, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			go func() {
				defer c.Close()
				c.Write([]byte("hold"))
				c.SetReadDeadline(time.Now().Add(60 * time.Second))
				bufio.NewReader(c).ReadString('\x00')
				closed <- time.Now()
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port, accepted, closed
}

// holdProbe opens a CONNECT tunnel through the sandbox's proxy to
// argv[1]:argv[2] and holds it open.
const holdProbe = `
import base64, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
s = socket.create_connection((u.hostname, u.port), timeout=5)
cred = base64.b64encode(("%s:%s" % (u.username, u.password)).encode()).decode()
target = "%s:%s" % (sys.argv[1], sys.argv[2])
s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n" % (target, target, cred)).encode())
time.sleep(120)
`

// TestNetPolicyCloseLeavesNothing: Close ends a sandbox's network for good.
// A tunnel open through the proxy is torn down (the far end sees it close
// at once, while before Close it stayed open), the audit file holds every
// decision, the proxy's port answers nobody, and the audit log, which
// belongs to the caller, still works.
func TestNetPolicyCloseLeavesNothing(t *testing.T) {
	t.Parallel()
	need(t, "curl")
	port, accepted, closed := holdServer(t)
	target := newHTTPTarget(t, "moat-close-pong\n", false)
	path := t.TempDir() + "/audit.jsonl"
	log, err := moat.OpenAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cfg := moat.Config{Network: moat.Audited(allowList(t, "localhost"), log)}
	for _, p := range localhostOK {
		cfg.AllowLocal = append(cfg.AllowLocal, netip.MustParsePrefix(p))
	}
	sb, err := moat.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	closedSB := false
	defer func() {
		if !closedSB {
			sb.Close()
		}
	}()
	proxy := proxyPort(t, sb)

	const n = 5
	for i := 0; i < n; i++ {
		r := sh(t, sb, fmt.Sprintf("curl -sS --noproxy '' -x \"$HTTP_PROXY\" http://localhost:%d/", target.port))
		if r.Stdout != "moat-close-pong\n" {
			t.Fatalf("request %d: %s", i, r)
		}
	}
	// A tunnel held open by a process that would outlive the test.
	c := sb.Command("python3", "-c", withPy(holdProbe), "localhost", strconv.Itoa(port))
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-accepted:
	case <-time.After(15 * time.Second):
		t.Fatal("the tunnel never reached the host server")
	}
	select {
	case at := <-closed:
		t.Fatalf("control: the tunnel closed on its own at %v, before Close", at)
	case <-time.After(500 * time.Millisecond):
	}
	start := time.Now()
	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closedSB = true
	c.Wait()
	select {
	case at := <-closed:
		t.Logf("tunnel closed %v after Close began", at.Sub(start))
	case <-time.After(5 * time.Second):
		t.Fatal("the tunnel through the proxy is still open 5s after Close")
	}

	lines := readAudit(t, path)
	if len(lines) != n+1 {
		t.Fatalf("audit has %d line(s), want %d", len(lines), n+1)
	}
	for i, e := range lines {
		w := wantAudit{"http", "localhost", target.port, true, loopbackIPs, `matches "localhost"`}
		if i == n {
			w = wantAudit{"connect", "localhost", port, true, loopbackIPs, `matches "localhost"`}
		}
		if why := w.check(e); why != "" {
			t.Fatalf("audit line %d: %s\n%s", i+1, why, e.Raw)
		}
	}
	if refused, _ := dialRefused("127.0.0.1:" + strconv.Itoa(proxy)); !refused {
		t.Fatalf("something still listens on the proxy's port %d after Close", proxy)
	}
	if r := inSandbox(t, sb, "true"); r.Err == nil {
		t.Fatalf("a closed sandbox ran a command: %s", r)
	}
	if err := log.Record(moat.AuditRecord{Host: "after.close", Port: 1}); err != nil {
		t.Fatalf("the caller's audit log stopped working after the sandbox closed: %v", err)
	}
}
