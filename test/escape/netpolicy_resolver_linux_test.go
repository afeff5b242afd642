//go:build linux

package escape_test

// The policy proxy attacked through names the test controls: every name is
// answered by a resolver of the test's own (moat.Config.Resolver), so any
// name can resolve to a local address (SSRF) or change its answer between
// the proxy's check and its dial (DNS rebinding), and every destination is
// a server this test starts on the host's loopback. Also: a failing audit
// log, 200 concurrent connections (no lost audit line, no leaked descriptor
// or goroutine), the proxy on the host's loopback when the sandbox has no
// network namespace, and what Close leaves behind. Every refusal has a
// positive control: the same request, allowed, reaching the same server.

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// TestNetworkSandboxResolvedNamesWithAllowLocal is the positive control of
// the SSRF tests: a name the test resolver maps to a loopback server is
// served over HTTP, CONNECT and SOCKS5 once AllowLocal lists the address,
// the name is looked up once per request, and the audit line carries the
// address dialed.
func TestNetworkSandboxResolvedNamesWithAllowLocal(t *testing.T) {
	need(t, "curl")
	srv := newHTTPTarget(t, "resolved-served\n", false)
	r := newFakeResolver()
	r.set("app.moat.test", "127.0.0.1")
	p := newProxiedConfig(t, moat.Config{Network: allowList(t, "app.moat.test"), Resolver: r, AllowLocal: parsePrefixes("127.0.0.1/32")})
	url := fmt.Sprintf("http://app.moat.test:%d/", srv.port)
	for i, proto := range viaProxy {
		t.Run(proto.name, func(t *testing.T) {
			status, body, res := curlVia(t, p.sb, proto.args, url)
			if status != "200" || body != "resolved-served\n" {
				t.Fatalf("got %s %q: %s", status, body, res)
			}
			if n := r.lookups("app.moat.test"); n != i+1 {
				t.Fatalf("the proxy looked the name up %d time(s) for %d request(s)", n, i+1)
			}
			p.expect(t, wantAudit{proto.name, "app.moat.test", srv.port, true, []string{"127.0.0.1"}, `matches "app.moat.test"`})
		})
	}
	if n := srv.hits.Load(); n != 3 {
		t.Fatalf("server saw %d request(s), want 3", n)
	}
}

// TestNetworkSandboxSSRF: a name the policy allows but that resolves to a
// loopback, IPv4-mapped loopback, cloud metadata, private, unspecified or
// NAT64-embedded local address is refused over HTTP, CONNECT and SOCKS5,
// before any connection, after one lookup, and audited with the refused
// address; so is a name one of whose several addresses is local, in either
// order. The control: the same names, with AllowLocal listing the loopback
// range, reach the loopback server.
func TestNetworkSandboxSSRF(t *testing.T) {
	need(t, "curl")
	srv := newHTTPTarget(t, "resolved-ssrf\n", false)
	cases := []struct {
		name   string
		addrs  []string
		ips    []string // the addresses the audit line may name
		reason string
		served bool // the control reaches the loopback server
	}{
		{"loopback", []string{"127.0.0.1"}, []string{"127.0.0.1"}, "resolves to 127.0.0.1, a loopback address", true},
		{"loopback-other", []string{"127.9.9.9"}, []string{"127.9.9.9"}, "a loopback address", false},
		// A mapped answer may be recorded as given or unmapped, the form
		// that is dialed; either way it is refused as loopback.
		{"mapped", []string{"::ffff:127.0.0.1"}, []string{"::ffff:127.0.0.1", "127.0.0.1"}, "127.0.0.1, a loopback address", true},
		{"ipv6-loopback", []string{"::1"}, []string{"::1"}, "a loopback address", false},
		{"metadata", []string{"169.254.169.254"}, []string{"169.254.169.254"}, "a cloud metadata address", false},
		{"metadata-mapped", []string{"::ffff:169.254.169.254"}, []string{"::ffff:169.254.169.254", "169.254.169.254"}, "a cloud metadata address", false},
		{"metadata-ipv6", []string{"fd00:ec2::254"}, []string{"fd00:ec2::254"}, "a cloud metadata address", false},
		{"link-local", []string{"169.254.1.1"}, []string{"169.254.1.1"}, "a link-local address", false},
		{"private", []string{"10.1.2.3"}, []string{"10.1.2.3"}, "a private address", false},
		{"unspecified", []string{"0.0.0.0"}, []string{"0.0.0.0"}, "an unspecified address", false},
		{"nat64-loopback", []string{"64:ff9b::7f00:1"}, []string{"64:ff9b::7f00:1"}, "embedding 127.0.0.1", false},
		{"public-then-loopback", []string{"203.0.113.10", "127.0.0.1"}, []string{"127.0.0.1"}, "resolves to 127.0.0.1", true},
		{"loopback-then-public", []string{"127.0.0.1", "203.0.113.10"}, []string{"127.0.0.1"}, "resolves to 127.0.0.1", true},
	}
	r := newFakeResolver()
	for _, c := range cases {
		r.set(c.name+".moat.test", c.addrs...)
	}
	policy := allowList(t, "*.moat.test")
	p := newProxiedConfig(t, moat.Config{Network: policy, Resolver: r})
	control := newProxiedConfig(t, moat.Config{Network: policy, Resolver: r, AllowLocal: parsePrefixes("127.0.0.0/8")})

	for _, c := range cases {
		name := c.name + ".moat.test"
		url := fmt.Sprintf("http://%s:%d/", name, srv.port)
		for _, proto := range viaProxy {
			t.Run(c.name+"/"+proto.name, func(t *testing.T) {
				hits, conns, lookups := srv.hits.Load(), srv.conns.Load(), r.lookups(name)
				status, body, res := curlVia(t, p.sb, proto.args, url)
				want := "403"
				if proto.name == "socks5" {
					want = "refused"
				}
				if status != want || strings.Contains(body, "resolved-ssrf") {
					t.Fatalf("got %s %q, want %s: %s", status, body, want, res)
				}
				if proto.name == "http" && !strings.HasPrefix(body, `moat: network policy allow-list: "`+name+`" is not allowed: `) {
					t.Fatalf("refusal body %q does not name the policy and host", body)
				}
				if srv.hits.Load() != hits || srv.conns.Load() != conns {
					t.Fatalf("the loopback server was reached: %d request(s), %d connection(s)",
						srv.hits.Load()-hits, srv.conns.Load()-conns)
				}
				if n := r.lookups(name) - lookups; n != 1 {
					t.Fatalf("the proxy looked %s up %d times for one request, want once", name, n)
				}
				p.expect(t, wantAudit{proto.name, name, srv.port, false, c.ips, c.reason})

				if !c.served {
					return
				}
				status, body, res = curlVia(t, control.sb, proto.args, url)
				if c.addrs[0] == "203.0.113.10" {
					// The first address is tried first and may hang:
					// the control only has to pass the checks.
					control.seen = len(readAudit(t, control.audit))
					return
				}
				if status != "200" || body != "resolved-ssrf\n" {
					t.Fatalf("control: got %s %q, want 200: %s", status, body, res)
				}
				control.expect(t, wantAudit{proto.name, name, srv.port, true, []string{"127.0.0.1"}, `matches "*.moat.test"`})
			})
		}
	}
}

// TestNetworkSandboxDNSRebinding: a name whose answer changes after the
// proxy's check (first an allowed address, then 127.0.0.1) cannot lead a
// connection to the loopback server: the proxy resolves once and dials the
// address it checked, which the audit line names; the next request, which
// does get 127.0.0.1, is refused. A decoy on 127.0.0.2 (the allowed first
// answer, listed in AllowLocal) is the positive control: it is where the
// first request lands. A second request over the same proxy connection
// also stays away from the loopback server. Last, a public first answer:
// the connection goes there (and fails), never to loopback.
func TestNetworkSandboxDNSRebinding(t *testing.T) {
	need(t, "curl")
	target := newHTTPTarget(t, "resolved-rebound-TARGET\n", false)
	decoy := newHTTPTargetAt(t, "127.0.0.2:"+strconv.Itoa(target.port), "resolved-decoy\n", false)
	r := newFakeResolver()
	rebind := func(first string) func(int) []netip.Addr {
		return func(call int) []netip.Addr {
			if call == 1 {
				return parseAddrs(first)
			}
			return parseAddrs("127.0.0.1")
		}
	}
	for _, proto := range viaProxy {
		r.setFunc("rebind-"+proto.name+".moat.test", rebind("127.0.0.2"))
		r.setFunc("keepalive-"+proto.name+".moat.test", rebind("127.0.0.2"))
		r.setFunc("public-"+proto.name+".moat.test", rebind("203.0.113.7"))
	}
	p := newProxiedConfig(t, moat.Config{Network: allowList(t, "*.moat.test"), Resolver: r, AllowLocal: parsePrefixes("127.0.0.2/32")})

	for _, proto := range viaProxy {
		t.Run("decoy/"+proto.name, func(t *testing.T) {
			name := "rebind-" + proto.name + ".moat.test"
			url := fmt.Sprintf("http://%s:%d/", name, target.port)
			status, body, res := curlVia(t, p.sb, proto.args, url)
			if status != "200" || body != "resolved-decoy\n" {
				t.Fatalf("first request: got %s %q, want the decoy: %s", status, body, res)
			}
			p.expect(t, wantAudit{proto.name, name, target.port, true, []string{"127.0.0.2"}, `matches "*.moat.test"`})
			status, body, res = curlVia(t, p.sb, proto.args, url)
			if status == "200" || strings.Contains(body, "TARGET") {
				t.Fatalf("second request (now 127.0.0.1): got %s %q: %s", status, body, res)
			}
			p.expect(t, wantAudit{proto.name, name, target.port, false, []string{"127.0.0.1"}, "a loopback address"})
			if n := r.lookups(name); n != 2 {
				t.Fatalf("%d lookups for two requests, want 2", n)
			}
		})
	}
	t.Run("keep-alive/http", func(t *testing.T) {
		// Two URLs, one curl: the second request may reuse the proxy
		// connection and its upstream.
		name := "keepalive-http.moat.test"
		url := fmt.Sprintf("http://%s:%d/", name, target.port)
		res := sh(t, p.sb, `curl -sS --max-time 10 -x "$HTTP_PROXY" `+url+" "+url)
		mustNotContain(t, res, "TARGET")
		mustContain(t, res, "resolved-decoy")
		lines := readAudit(t, p.audit)[p.seen:]
		p.seen += len(lines)
		for _, l := range lines {
			if l.Allowed && l.IP != "127.0.0.2" {
				t.Fatalf("an allowed line names %q, not the checked address:\n%s", l.IP, l.Raw)
			}
		}
	})
	for _, proto := range viaProxy {
		t.Run("public/"+proto.name, func(t *testing.T) {
			name := "public-" + proto.name + ".moat.test"
			url := fmt.Sprintf("http://%s:%d/", name, target.port)
			mustNotContain(t, sh(t, p.sb, "curl -sS --max-time 3 "+strings.ReplaceAll(proto.args, "{URL}", url)), "TARGET")
			if n := r.lookups(name); n != 1 {
				t.Fatalf("%d lookups for one request, want 1", n)
			}
			p.expect(t, wantAudit{proto.name, name, target.port, true, []string{"203.0.113.7"}, `matches "*.moat.test"`})
		})
	}
	if n, c := target.hits.Load(), target.conns.Load(); n != 0 || c != 0 {
		t.Fatalf("the loopback target was reached: %d request(s), %d connection(s)", n, c)
	}
	if decoy.hits.Load() == 0 {
		t.Fatal("control: the decoy was never reached")
	}
}

// TestNetworkSandboxAuditFailureRefuses: when the audit line cannot be
// written (the log is /dev/full, or already closed, or the inner of two
// nested logs fails) the connection is refused, over HTTP, CONNECT and
// SOCKS5, and the server sees nothing. The control is the same sandbox
// configuration with a working log.
func TestNetworkSandboxAuditFailureRefuses(t *testing.T) {
	need(t, "curl")
	srv := newHTTPTarget(t, "resolved-audited\n", false)
	r := newFakeResolver()
	r.set("app.moat.test", "127.0.0.1")
	policy := allowList(t, "app.moat.test")
	url := fmt.Sprintf("http://app.moat.test:%d/", srv.port)
	open := func(t *testing.T, path string) *moat.NetworkAuditLog {
		l, err := moat.OpenAuditLog(path)
		if err != nil {
			t.Fatalf("OpenAuditLog(%q): %v", path, err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	for _, tc := range []struct {
		name   string
		policy func(t *testing.T) moat.NetworkPolicy
		ok     bool
	}{
		{"control/working log", func(t *testing.T) moat.NetworkPolicy {
			return moat.Audited(policy, open(t, filepath.Join(t.TempDir(), "a.jsonl")))
		}, true},
		{"/dev/full", func(t *testing.T) moat.NetworkPolicy {
			if _, err := os.Stat("/dev/full"); err != nil {
				t.Fatalf("/dev/full: %v", err)
			}
			return moat.Audited(policy, open(t, "/dev/full"))
		}, false},
		{"closed log", func(t *testing.T) moat.NetworkPolicy {
			l := open(t, filepath.Join(t.TempDir(), "a.jsonl"))
			l.Close()
			return moat.Audited(policy, l)
		}, false},
		{"inner of two logs fails", func(t *testing.T) moat.NetworkPolicy {
			inner := moat.Audited(policy, open(t, "/dev/full"))
			return moat.Audited(inner, open(t, filepath.Join(t.TempDir(), "a.jsonl")))
		}, false},
		{"outer of two logs fails", func(t *testing.T) moat.NetworkPolicy {
			inner := moat.Audited(policy, open(t, filepath.Join(t.TempDir(), "a.jsonl")))
			return moat.Audited(inner, open(t, "/dev/full"))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, moat.Config{Network: tc.policy(t), Resolver: r, AllowLocal: parsePrefixes("127.0.0.1/32")})
			for _, proto := range viaProxy {
				hits, conns := srv.hits.Load(), srv.conns.Load()
				status, body, res := curlVia(t, sb, proto.args, url)
				if tc.ok {
					if status != "200" || body != "resolved-audited\n" {
						t.Fatalf("%s: got %s %q, want 200: %s", proto.name, status, body, res)
					}
					continue
				}
				want := "403"
				if proto.name == "socks5" {
					want = "refused"
				}
				if status != want {
					t.Fatalf("%s: got %s %q, want %s: %s", proto.name, status, body, want, res)
				}
				if proto.name == "http" && !strings.Contains(body, "audit log write failed") {
					t.Fatalf("%s: the refusal does not say the audit failed: %q", proto.name, body)
				}
				if srv.hits.Load() != hits || srv.conns.Load() != conns {
					t.Fatalf("%s: an unaudited connection reached the server", proto.name)
				}
			}
		})
	}
}

// openFDs lists this process's descriptors, each with what it points to.
func openFDs(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out[e.Name()] = target
	}
	return out
}

// settleBack waits up to 10s for the goroutine count to fall to at most
// goroutines and for the descriptors to be exactly fds (the listing's own
// handle aside), and describes what is left otherwise.
func settleBack(t *testing.T, goroutines int, fds map[string]string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	// The directory handle of the listing is one descriptor that comes
	// and goes with each call, pointing at /proc/<pid>/fd.
	dropListing := func(l []string) []string {
		out := l[:0]
		for _, s := range l {
			if !strings.HasSuffix(s, "/fd") {
				out = append(out, s)
			}
		}
		return out
	}
	for {
		g := runtime.NumGoroutine()
		now := openFDs(t)
		var extra, missing []string
		for fd, target := range now {
			if fds[fd] != target {
				extra = append(extra, fd+" -> "+target)
			}
		}
		for fd, target := range fds {
			if _, ok := now[fd]; !ok {
				missing = append(missing, fd+" -> "+target)
			}
		}
		extra, missing = dropListing(extra), dropListing(missing)
		if g <= goroutines && len(extra) == 0 && len(missing) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			sort.Strings(extra)
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			return fmt.Sprintf("goroutines %d (baseline %d); descriptors left open: %q, closed: %q\n%s",
				g, goroutines, extra, missing, buf)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// concurrentClient makes n requests to argv[1] at once through
// $HTTP_PROXY, each on its own connection, and prints how many succeeded.
const concurrentClient = `
import os, sys, threading, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": os.environ["HTTP_PROXY"]}))
lock = threading.Lock()
ok, errs = [0], []
start = threading.Barrier(n)
def one(i):
    start.wait()
    try:
        body = opener.open(url + "?i=%d" % i, timeout=60).read()
        if body == b"resolved-many\n":
            with lock:
                ok[0] += 1
    except Exception as e:
        with lock:
            errs.append(repr(e))
ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("OK %d" % ok[0])
for e in errs[:5]:
    print("ERR " + e)
`

// TestNetworkSandboxConcurrentConnections: 200 connections at once through
// one sandbox's proxy (the server holds every request until all 200 are
// in, so they really are concurrent) lose no audit line: exactly 200
// allowed lines. After Close and the log's Close, the test process has
// exactly the descriptors it had before New, and its goroutines settle
// back to what they were.
func TestNetworkSandboxConcurrentConnections(t *testing.T) {
	need(t, "python3")
	const n = 200
	// The server holds each request until gate.n of them are in.
	type gate struct {
		n    int32
		all  chan struct{}
		once sync.Once
	}
	var current atomic.Pointer[gate]
	var inFlight, maxInFlight, served atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := current.Load()
		cur := inFlight.Add(1)
		for {
			m := maxInFlight.Load()
			if cur <= m || maxInFlight.CompareAndSwap(m, cur) {
				break
			}
		}
		if cur >= g.n {
			g.once.Do(func() { close(g.all) })
		}
		select {
		case <-g.all:
		case <-time.After(20 * time.Second):
		}
		served.Add(1)
		inFlight.Add(-1)
		io.WriteString(w, "resolved-many\n")
	})}
	srv.SetKeepAlivesEnabled(false)
	go srv.Serve(ln)
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	url := fmt.Sprintf("http://many.moat.test:%d/", port)
	r := newFakeResolver()
	r.set("many.moat.test", "127.0.0.1")
	policy := allowList(t, "many.moat.test")
	cfg := func(log *moat.NetworkAuditLog) moat.Config {
		return moat.Config{Network: moat.Audited(policy, log), Resolver: r, AllowLocal: parsePrefixes("127.0.0.1/32")}
	}
	dir := t.TempDir()

	// Warm up: whatever the runtime and the package open once for good
	// (the network poller, the re-exec helper) is open before the
	// baseline.
	func() {
		log, err := moat.OpenAuditLog(filepath.Join(dir, "warm.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		sb, err := moat.New(cfg(log))
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		current.Store(&gate{n: 1, all: make(chan struct{})})
		out, err := sb.Command("python3", "-c", concurrentClient, url, "1").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "OK 1\n") {
			t.Fatalf("warm-up: %v\n%s", err, out)
		}
	}()
	served.Store(0)
	maxInFlight.Store(0)
	current.Store(&gate{n: n, all: make(chan struct{})})
	time.Sleep(100 * time.Millisecond) // the warm-up's server goroutines end

	runtime.GC()
	goroutines := runtime.NumGoroutine()
	fds := openFDs(t)

	path := filepath.Join(dir, "audit.jsonl")
	log, err := moat.OpenAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := moat.New(cfg(log))
	if err != nil {
		t.Fatal(err)
	}
	out, err := sb.Command("python3", "-c", concurrentClient, url, strconv.Itoa(n)).CombinedOutput()
	if cerr := sb.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	if cerr := log.Close(); cerr != nil {
		t.Errorf("audit log Close: %v", cerr)
	}
	if err != nil || !strings.HasPrefix(string(out), fmt.Sprintf("OK %d\n", n)) {
		t.Fatalf("not every request succeeded: %v\n%s", err, out)
	}
	if m := maxInFlight.Load(); m != n {
		t.Fatalf("at most %d requests were in flight at once, want %d", m, n)
	}
	if s := served.Load(); s != n {
		t.Fatalf("server served %d request(s), want %d", s, n)
	}
	// Alike decisions past the first few are counted into "repeated"
	// lines (internal/auditlog/throttle.go): the lines account for every request.
	lines := readAudit(t, path)
	var allowed int64
	for _, l := range lines {
		if l.Allowed && l.Protocol == "http" && l.Host == "many.moat.test" && l.Port == port && l.IP == "127.0.0.1" {
			allowed += max(l.Repeated, 1)
		}
	}
	if allowed != n {
		t.Fatalf("audit has %d line(s) accounting for %d allowed requests, want exactly %d", len(lines), allowed, n)
	}
	if left := settleBack(t, goroutines, fds); left != "" {
		t.Fatalf("after Close: %s", left)
	}
}

// socks5Handshake runs a SOCKS5 handshake on c: greeting with methods,
// then, if the server picks username/password, user and pass, then
// CONNECT to host:port. It returns the server's method choice, the auth
// status (-1 when not reached) and the CONNECT reply code (-1 when not
// reached).
func socks5Handshake(c net.Conn, methods []byte, user, pass, host string, port int) (method, auth, reply int) {
	auth, reply = -1, -1
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(append([]byte{5, byte(len(methods))}, methods...))
	b := make([]byte, 2)
	if _, err := io.ReadFull(c, b); err != nil {
		return -1, auth, reply
	}
	method = int(b[1])
	switch method {
	case 2:
		msg := append([]byte{1, byte(len(user))}, user...)
		msg = append(append(msg, byte(len(pass))), pass...)
		c.Write(msg)
		if _, err := io.ReadFull(c, b); err != nil {
			return method, auth, reply
		}
		auth = int(b[1])
		if auth != 0 {
			return method, auth, reply
		}
	case 0:
		auth = 0
	default:
		return method, auth, reply
	}
	req := append([]byte{5, 1, 0, 3, byte(len(host))}, host...)
	req = append(req, byte(port>>8), byte(port))
	c.Write(req)
	head := make([]byte, 4)
	if _, err := io.ReadFull(c, head); err != nil {
		return method, auth, reply
	}
	return method, auth, int(head[1])
}

// rawProxyRequest sends one raw request on a new connection to addr and
// returns the status code.
func rawProxyRequest(t *testing.T, addr, request string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, request)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the proxy's answer: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestNetworkSandboxWithoutNamespaces: on a host that refuses user
// namespaces (withoutNamespaces) the proxy listens on the host's loopback
// at the port of sb.ProxyURL(), and Landlock lets the sandbox connect to
// that port only. The sandbox's clients work through it; from the host, a
// request without the credential (or with a wrong one) gets 407 and
// SOCKS5 without authentication is refused, while the credential works;
// from the sandbox, a direct connect to another host loopback port fails
// while the proxy's port connects. The report names the Landlock port
// rule, and after Close the port refuses connections.
func TestNetworkSandboxWithoutNamespaces(t *testing.T) {
	withoutNamespaces(t, func(t *testing.T) {
		need(t, "curl", "python3")
		srv := newHTTPTarget(t, "resolved-nons\n", false)
		r := newFakeResolver()
		r.set("app.moat.test", "127.0.0.1")
		p := newProxiedConfig(t, moat.Config{Network: allowList(t, "app.moat.test"), Resolver: r, AllowLocal: parsePrefixes("127.0.0.1/32")})
		sb := p.sb
		u, err := url.Parse(sb.ProxyURL())
		if err != nil || u.Port() == "" {
			t.Fatalf("ProxyURL %q: %v", sb.ProxyURL(), err)
		}
		port, _ := strconv.Atoi(u.Port())
		token, _ := u.User.Password()
		addr := "127.0.0.1:" + u.Port()

		t.Run("report", func(t *testing.T) {
			rep := sb.Report()
			if rep.Active("namespaces") {
				t.Fatalf("namespaces still active:\n%s", rep)
			}
			want := fmt.Sprintf("Landlock allows TCP connect to port %d only", port)
			found := false
			for _, l := range rep.Layers {
				found = found || l.Name == "network" && l.Active && strings.Contains(l.Detail, want)
			}
			if !found {
				t.Fatalf("report does not state the Landlock port rule %q:\n%s", want, rep)
			}
		})
		if res := inSandbox(t, sb, "true"); res.Code != 0 {
			t.Fatalf("true: %s", res)
		}
		t.Run("proxy listens on the host", func(t *testing.T) {
			if refused, err := dialRefused(addr); refused {
				t.Fatalf("nothing listens on %s, the port of ProxyURL: %v", addr, err)
			}
		})
		t.Run("sandbox clients", func(t *testing.T) {
			target := fmt.Sprintf("http://app.moat.test:%d/", srv.port)
			for _, proto := range viaProxy {
				status, body, res := curlVia(t, sb, proto.args, target)
				if status != "200" || body != "resolved-nons\n" {
					t.Fatalf("%s: got %s %q: %s", proto.name, status, body, res)
				}
				p.expect(t, wantAudit{proto.name, "app.moat.test", srv.port, true, []string{"127.0.0.1"}, `matches "app.moat.test"`})
			}
		})
		t.Run("host without the credential", func(t *testing.T) {
			hits := srv.hits.Load()
			get := fmt.Sprintf("GET http://app.moat.test:%d/ HTTP/1.1\r\nHost: app.moat.test:%d\r\n", srv.port, srv.port)
			connect := fmt.Sprintf("CONNECT app.moat.test:%d HTTP/1.1\r\nHost: app.moat.test:%d\r\n", srv.port, srv.port)
			basic := func(user, pass string) string {
				return "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)) + "\r\n"
			}
			for _, tc := range []struct {
				name, req string
				want      int
			}{
				{"GET none", get + "\r\n", 407},
				{"GET wrong password", get + basic("moat", "wrong") + "\r\n", 407},
				{"GET wrong user", get + basic("root", token) + "\r\n", 407},
				{"GET bearer", get + "Proxy-Authorization: Bearer " + token + "\r\n\r\n", 407},
				{"CONNECT none", connect + "\r\n", 407},
				{"CONNECT wrong password", connect + basic("moat", token+"x") + "\r\n", 407},
				{"control/GET", get + basic("moat", token) + "Connection: close\r\n\r\n", 200},
				{"control/CONNECT", connect + basic("moat", token) + "\r\n", 200},
			} {
				if got := rawProxyRequest(t, addr, tc.req); got != tc.want {
					t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
				}
			}
			for _, tc := range []struct {
				name                string
				methods             []byte
				user, pass          string
				method, auth, reply int
			}{
				{"no auth offered", []byte{0}, "", "", 0xff, -1, -1},
				{"wrong password", []byte{0, 2}, "moat", "wrong", 2, 1, -1},
				{"wrong user", []byte{2}, "root", token, 2, 1, -1},
				{"control", []byte{0, 2}, "moat", token, 2, 0, 0},
			} {
				c, err := net.DialTimeout("tcp", addr, 3*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				m, a, rep := socks5Handshake(c, tc.methods, tc.user, tc.pass, "app.moat.test", srv.port)
				c.Close()
				if m != tc.method || (tc.auth >= 0 && a != tc.auth) || (tc.auth < 0 && a == 0) || rep != tc.reply {
					t.Errorf("SOCKS5 %s: method %#x auth %d reply %d, want method %#x auth %d reply %d",
						tc.name, m, a, rep, tc.method, tc.auth, tc.reply)
				}
			}
			// Only the three controls reached the server, and only they were
			// audited (a failed authentication comes before any decision).
			if n := srv.hits.Load() - hits; n != 1 {
				t.Errorf("server saw %d request(s) from the host, want 1 (the GET control; the tunnels sent none)", n)
			}
			p.expect(t,
				wantAudit{"http", "app.moat.test", srv.port, true, []string{"127.0.0.1"}, "matches"},
				wantAudit{"connect", "app.moat.test", srv.port, true, []string{"127.0.0.1"}, "matches"},
				wantAudit{"socks5", "app.moat.test", srv.port, true, []string{"127.0.0.1"}, "matches"})
		})
		t.Run("sandbox direct connects", func(t *testing.T) {
			prog := `
import socket, sys
for port in sys.argv[1:]:
    try:
        s = socket.create_connection(("127.0.0.1", int(port)), timeout=3)
        s.close()
        print(port, "OK")
    except OSError as e:
        print(port, "ERRNO", e.errno)
`
			conns := srv.conns.Load()
			res := inSandbox(t, sb, "python3", "-c", prog, strconv.Itoa(srv.port), u.Port())
			if res.Code != 0 {
				t.Fatalf("probe: %s", res)
			}
			mustContain(t, res, u.Port()+" OK")
			if !strings.Contains(res.Stdout, strconv.Itoa(srv.port)+" ERRNO") || srv.conns.Load() != conns {
				t.Fatalf("the sandbox connected straight to a host loopback port: %s", res)
			}
			mustContain(t, onHost(t, "python3", "-c", prog, strconv.Itoa(srv.port)), strconv.Itoa(srv.port)+" OK")
			t.Logf("sandbox: %s", strings.ReplaceAll(strings.TrimSpace(res.Stdout), "\n", "; "))
		})
		t.Run("closed after Close", func(t *testing.T) {
			if err := sb.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if refused, _ := dialRefused(addr); !refused {
				t.Fatalf("%s still accepts connections after Close", addr)
			}
		})
	})
}

// listensOn reports whether a TCP socket listens on port in this network
// namespace, from /proc/net/tcp and tcp6.
func listensOn(port int) bool {
	hexPort := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 3 && strings.HasSuffix(fields[1], hexPort) && fields[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// TestNetworkSandboxCloseLeavesNothing (namespaces): Close, with a tunnel
// held open through the proxy, ends it, and afterwards the test process's
// goroutines are back to their baseline, no zygote is left, and nothing
// listens on the proxy's port. The control: while the sandbox runs, the
// tunnel stays open.
func TestNetworkSandboxCloseLeavesNothing(t *testing.T) {
	need(t, "python3")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted, closed := make(chan struct{}, 4), make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(60 * time.Second))
				io.Copy(io.Discard, c)
				closed <- struct{}{}
			}()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	r := newFakeResolver()
	r.set("hold.moat.test", "127.0.0.1")

	// Warm up: what the package starts once per process for good (the
	// thread that spawns every sandbox's helpers) exists before the
	// baseline, whatever test ran first.
	warm := newSandbox(t, moat.Config{})
	if err := warm.Command("true").Run(); err != nil {
		t.Fatal(err)
	}
	warm.Close()
	runtime.GC()
	goroutines := runtime.NumGoroutine()
	sb, err := moat.New(moat.Config{Network: allowList(t, "hold.moat.test"), Resolver: r, AllowLocal: parsePrefixes("127.0.0.1/32")})
	if err != nil {
		t.Fatal(err)
	}
	closedSB := false
	defer func() {
		if !closedSB {
			sb.Close()
		}
	}()
	needNamespaces(t, sb)
	proxyPort := proxyPort(t, sb)
	hold := `
import base64, os, socket, sys, time, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
s = socket.create_connection((u.hostname, u.port), timeout=5)
cred = base64.b64encode(("%s:%s" % (u.username, u.password)).encode()).decode()
s.sendall(("CONNECT hold.moat.test:%s HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n" % (sys.argv[1], cred)).encode())
print(s.recv(64).decode().split("\r\n")[0], flush=True)
time.sleep(120)
`
	c := sb.Command("python3", "-c", hold, strconv.Itoa(port))
	stdout, _ := c.StdoutPipe()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("CONNECT through the proxy: %q", line)
	}
	<-accepted
	if listensOn(proxyPort) {
		t.Fatalf("with namespaces, something listens on the host's port %d", proxyPort)
	}
	select {
	case <-closed:
		t.Fatal("control: the tunnel closed before Close")
	case <-time.After(300 * time.Millisecond):
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closedSB = true
	c.Wait()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the tunnel is still open 5s after Close")
	}
	if z := moattest.Zygotes(); len(z) != 0 {
		t.Fatalf("zygotes left after Close: %v", z)
	}
	if listensOn(proxyPort) {
		t.Fatalf("something listens on the proxy's port %d after Close", proxyPort)
	}
	if refused, _ := dialRefused("127.0.0.1:" + strconv.Itoa(proxyPort)); !refused {
		t.Fatalf("127.0.0.1:%d accepts connections after Close", proxyPort)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutines { // the accept loop above started before the baseline
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines %d after Close, baseline %d:\n%s", runtime.NumGoroutine(), goroutines, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
