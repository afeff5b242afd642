package moat_test

// The policy proxy of real sandboxes, attacked from inside them: names that
// resolve to local addresses (SSRF), DNS rebinding, a failing audit log,
// 200 concurrent connections (no lost audit line, no leaked descriptor or
// goroutine), the proxy on the host's loopback when the sandbox has no
// network namespace, and what Close leaves behind. Names are resolved by a
// test resolver (moat.SetProxyResolver), so every destination is a server
// this test starts on the host's loopback. Every refusal has a positive
// control: the same request, allowed, reaching the same server.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// psbResolver is a test resolver: each name has a function of the call
// number (1 for the first lookup of that name) giving its addresses. It
// counts the lookups of every name.
type psbResolver struct {
	mu      sync.Mutex
	answers map[string]func(call int) []netip.Addr
	calls   map[string]int
}

func newPSBResolver() *psbResolver {
	return &psbResolver{answers: map[string]func(int) []netip.Addr{}, calls: map[string]int{}}
}

// set makes name resolve to addrs, always.
func (r *psbResolver) set(name string, addrs ...string) {
	as := psbAddrs(addrs...)
	r.setFunc(name, func(int) []netip.Addr { return as })
}

func (r *psbResolver) setFunc(name string, f func(call int) []netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[name] = f
}

func (r *psbResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[host]++
	f, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return f(r.calls[host]), nil
}

func (r *psbResolver) lookups(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

func psbAddrs(addrs ...string) []netip.Addr {
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

func psbPrefixes(prefixes ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(prefixes))
	for i, p := range prefixes {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// psbSandbox is a sandbox whose policy is audited to a file, created with
// the resolver r in its proxy.
type psbSandbox struct {
	sb    *moat.Sandbox
	audit string
	seen  int
}

// newPSB creates a sandbox with cfg.Network audited to a fresh file and r
// as its proxy's resolver (nil: the host's). The sandbox and then the log
// are closed when the test ends; a Close error fails the test.
func newPSB(t *testing.T, r *psbResolver, cfg moat.Config) *psbSandbox {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := moat.OpenAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cfg.Network = moat.Audited(cfg.Network, log)
	sb := psbNew(t, r, cfg)
	return &psbSandbox{sb: sb, audit: path}
}

// psbNew creates a sandbox with r as its proxy's resolver.
func psbNew(t *testing.T, r *psbResolver, cfg moat.Config) *moat.Sandbox {
	t.Helper()
	if r != nil {
		restore := moat.SetProxyResolver(r)
		defer restore()
	}
	sb, err := moat.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return sb
}

// psbLine is one audit line.
type psbLine struct {
	Timestamp string `json:"timestamp"`
	Sandbox   string `json:"sandbox"`
	Protocol  string `json:"protocol"`
	Host      string `json:"host"`
	Port      int    `json:"port"`
	IP        string `json:"ip"`
	Allowed   bool   `json:"allowed"`
	Reason    string `json:"reason"`
	raw       string
}

func psbReadAudit(t *testing.T, path string) []psbLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []psbLine
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		var l psbLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("audit line %d: %v\n%s", len(out)+1, err, sc.Text())
		}
		l.raw = sc.Text()
		out = append(out, l)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("audit file ends in a torn line:\n%s", b)
	}
	return out
}

// psbWant is what an audit line must say; reason is a substring and ip
// lists the acceptable addresses, separated by "|".
type psbWant struct {
	protocol, host string
	port           int
	allowed        bool
	ip, reason     string
}

// expect checks the audit lines written since the last call, one for one.
func (p *psbSandbox) expect(t *testing.T, want ...psbWant) {
	t.Helper()
	all := psbReadAudit(t, p.audit)
	got := all[p.seen:]
	p.seen = len(all)
	var b strings.Builder
	for _, l := range got {
		b.WriteString("  " + l.raw + "\n")
	}
	if len(got) != len(want) {
		t.Fatalf("audit: %d new line(s), want %d:\n%s", len(got), len(want), b.String())
	}
	for i, w := range want {
		l := got[i]
		if l.Protocol != w.protocol || l.Host != w.host || l.Port != w.port || l.Allowed != w.allowed ||
			!psbOneOf(l.IP, w.ip) || !strings.Contains(l.Reason, w.reason) {
			t.Fatalf("audit line %d: want protocol=%s host=%s port=%d allowed=%v ip=%q reason~%q, got:\n%s",
				i+1, w.protocol, w.host, w.port, w.allowed, w.ip, w.reason, b.String())
		}
	}
}

func psbOneOf(ip, alternatives string) bool {
	for _, a := range strings.Split(alternatives, "|") {
		if ip == a {
			return true
		}
	}
	return false
}

// psbServer is an HTTP server on addr (host:0 or host:port) of the host's
// loopback answering body; it counts requests and connections.
type psbServer struct {
	port  int
	hits  atomic.Int32
	conns atomic.Int32
}

func newPSBServer(t *testing.T, addr, body string) *psbServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	s := &psbServer{port: ln.Addr().(*net.TCPAddr).Port}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		io.WriteString(w, body)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return s
}

// psbCurlFmt ends curl's output with a status line psbCurl parses.
const psbCurlFmt = `-w '\nPSB code=%{http_code} connect=%{http_connect}\n'`

var psbCurlLine = regexp.MustCompile(`\nPSB code=(\d+) connect=(\d+)\nEXIT=(\d+)\n$`)

// psbCurl runs curl in sb with args and returns an HTTP-like status ("200",
// "403", "407", "refused" for a failed SOCKS5 connect, "exit N" for another
// failure) and the body.
func psbCurl(t *testing.T, sb *moat.Sandbox, args string) (status, body, out string) {
	t.Helper()
	o, _ := sb.Command("sh", "-c", "curl -sS --max-time 10 "+psbCurlFmt+" "+args+"; echo EXIT=$?").CombinedOutput()
	out = string(o)
	m := psbCurlLine.FindStringSubmatchIndex(out)
	if m == nil {
		t.Fatalf("curl printed no status line:\n%s", out)
	}
	body = out[:m[0]]
	code, connect, exit := out[m[2]:m[3]], out[m[4]:m[5]], out[m[6]:m[7]]
	switch {
	case connect != "000" && connect != "200":
		return connect, body, out
	case code != "000":
		return code, body, out
	case exit == "97":
		return "refused", body, out
	}
	return "exit " + exit, body, out
}

// psbProtocols are the three ways a client asks the proxy, as curl
// arguments; {URL} is replaced by the target URL.
var psbProtocols = []struct{ name, args string }{
	{"http", `-x "$HTTP_PROXY" {URL}`},
	{"connect", `-p -x "$HTTP_PROXY" {URL}`},
	{"socks5", `--proxy "$ALL_PROXY" {URL}`},
}

func psbArgs(args, url string) string { return strings.ReplaceAll(args, "{URL}", url) }

func psbNeed(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed; ./test.sh installs it", tool)
		}
	}
}

// TestNetworkSandboxResolvedNamesWithAllowLocal is the positive control of
// the SSRF tests: a name the test resolver maps to a loopback server is
// served over HTTP, CONNECT and SOCKS5 once AllowLocal lists the address,
// the name is looked up once per request, and the audit line carries the
// address dialed.
func TestNetworkSandboxResolvedNamesWithAllowLocal(t *testing.T) {
	psbNeed(t, "curl")
	srv := newPSBServer(t, "127.0.0.1:0", "psb-served\n")
	r := newPSBResolver()
	r.set("app.moat.test", "127.0.0.1")
	policy, _ := moat.AllowList("app.moat.test")
	p := newPSB(t, r, moat.Config{Network: policy, AllowLocal: psbPrefixes("127.0.0.1/32")})
	url := fmt.Sprintf("http://app.moat.test:%d/", srv.port)
	for i, proto := range psbProtocols {
		t.Run(proto.name, func(t *testing.T) {
			status, body, out := psbCurl(t, p.sb, psbArgs(proto.args, url))
			if status != "200" || body != "psb-served\n" {
				t.Fatalf("got %s %q:\n%s", status, body, out)
			}
			if n := r.lookups("app.moat.test"); n != i+1 {
				t.Fatalf("the proxy looked the name up %d time(s) for %d request(s)", n, i+1)
			}
			p.expect(t, psbWant{proto.name, "app.moat.test", srv.port, true, "127.0.0.1", `matches "app.moat.test"`})
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
	psbNeed(t, "curl")
	srv := newPSBServer(t, "127.0.0.1:0", "psb-ssrf\n")
	cases := []struct {
		name   string
		addrs  []string
		ip     string // the address the audit line names
		reason string
		served bool // the control reaches the loopback server
	}{
		{"loopback", []string{"127.0.0.1"}, "127.0.0.1", "resolves to 127.0.0.1, a loopback address", true},
		{"loopback-other", []string{"127.9.9.9"}, "127.9.9.9", "a loopback address", false},
		// A mapped answer may be recorded as given or unmapped, the form
		// that is dialed; either way it is refused as loopback.
		{"mapped", []string{"::ffff:127.0.0.1"}, "::ffff:127.0.0.1|127.0.0.1", "127.0.0.1, a loopback address", true},
		{"ipv6-loopback", []string{"::1"}, "::1", "a loopback address", false},
		{"metadata", []string{"169.254.169.254"}, "169.254.169.254", "a cloud metadata address", false},
		{"metadata-mapped", []string{"::ffff:169.254.169.254"}, "::ffff:169.254.169.254|169.254.169.254", "a cloud metadata address", false},
		{"metadata-ipv6", []string{"fd00:ec2::254"}, "fd00:ec2::254", "a cloud metadata address", false},
		{"link-local", []string{"169.254.1.1"}, "169.254.1.1", "a link-local address", false},
		{"private", []string{"10.1.2.3"}, "10.1.2.3", "a private address", false},
		{"unspecified", []string{"0.0.0.0"}, "0.0.0.0", "an unspecified address", false},
		{"nat64-loopback", []string{"64:ff9b::7f00:1"}, "64:ff9b::7f00:1", "embedding 127.0.0.1", false},
		{"public-then-loopback", []string{"203.0.113.10", "127.0.0.1"}, "127.0.0.1", "resolves to 127.0.0.1", true},
		{"loopback-then-public", []string{"127.0.0.1", "203.0.113.10"}, "127.0.0.1", "resolves to 127.0.0.1", true},
	}
	r := newPSBResolver()
	for _, c := range cases {
		r.set(c.name+".moat.test", c.addrs...)
	}
	policy, _ := moat.AllowList("*.moat.test")
	p := newPSB(t, r, moat.Config{Network: policy})
	control := newPSB(t, r, moat.Config{Network: policy, AllowLocal: psbPrefixes("127.0.0.0/8")})

	for _, c := range cases {
		name := c.name + ".moat.test"
		url := fmt.Sprintf("http://%s:%d/", name, srv.port)
		for _, proto := range psbProtocols {
			t.Run(c.name+"/"+proto.name, func(t *testing.T) {
				hits, conns, lookups := srv.hits.Load(), srv.conns.Load(), r.lookups(name)
				status, body, out := psbCurl(t, p.sb, psbArgs(proto.args, url))
				want := "403"
				if proto.name == "socks5" {
					want = "refused"
				}
				if status != want || strings.Contains(body, "psb-ssrf") {
					t.Fatalf("got %s %q, want %s:\n%s", status, body, want, out)
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
				p.expect(t, psbWant{proto.name, name, srv.port, false, c.ip, c.reason})

				if !c.served {
					return
				}
				status, body, out = psbCurl(t, control.sb, psbArgs(proto.args, url))
				if c.addrs[0] == "203.0.113.10" {
					// The first address is tried first and may hang:
					// the control only has to pass the checks.
					control.seen = len(psbReadAudit(t, control.audit))
					return
				}
				if status != "200" || body != "psb-ssrf\n" {
					t.Fatalf("control: got %s %q, want 200:\n%s", status, body, out)
				}
				control.expect(t, psbWant{proto.name, name, srv.port, true, "127.0.0.1", `matches "*.moat.test"`})
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
	psbNeed(t, "curl")
	target := newPSBServer(t, "127.0.0.1:0", "psb-rebound-TARGET\n")
	decoy := newPSBServer(t, "127.0.0.2:"+strconv.Itoa(target.port), "psb-decoy\n")
	r := newPSBResolver()
	rebind := func(first string) func(int) []netip.Addr {
		return func(call int) []netip.Addr {
			if call == 1 {
				return psbAddrs(first)
			}
			return psbAddrs("127.0.0.1")
		}
	}
	for _, proto := range psbProtocols {
		r.setFunc("rebind-"+proto.name+".moat.test", rebind("127.0.0.2"))
		r.setFunc("keepalive-"+proto.name+".moat.test", rebind("127.0.0.2"))
		r.setFunc("public-"+proto.name+".moat.test", rebind("203.0.113.7"))
	}
	policy, _ := moat.AllowList("*.moat.test")
	p := newPSB(t, r, moat.Config{Network: policy, AllowLocal: psbPrefixes("127.0.0.2/32")})

	for _, proto := range psbProtocols {
		t.Run("decoy/"+proto.name, func(t *testing.T) {
			name := "rebind-" + proto.name + ".moat.test"
			url := fmt.Sprintf("http://%s:%d/", name, target.port)
			status, body, out := psbCurl(t, p.sb, psbArgs(proto.args, url))
			if status != "200" || body != "psb-decoy\n" {
				t.Fatalf("first request: got %s %q, want the decoy:\n%s", status, body, out)
			}
			p.expect(t, psbWant{proto.name, name, target.port, true, "127.0.0.2", `matches "*.moat.test"`})
			status, body, out = psbCurl(t, p.sb, psbArgs(proto.args, url))
			if status == "200" || strings.Contains(body, "TARGET") {
				t.Fatalf("second request (now 127.0.0.1): got %s %q:\n%s", status, body, out)
			}
			p.expect(t, psbWant{proto.name, name, target.port, false, "127.0.0.1", "a loopback address"})
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
		o, _ := p.sb.Command("sh", "-c", `curl -sS --max-time 10 -x "$HTTP_PROXY" `+url+" "+url).CombinedOutput()
		if strings.Contains(string(o), "TARGET") || !strings.Contains(string(o), "psb-decoy") {
			t.Fatalf("got:\n%s", o)
		}
		lines := psbReadAudit(t, p.audit)[p.seen:]
		p.seen += len(lines)
		for _, l := range lines {
			if l.Allowed && l.IP != "127.0.0.2" {
				t.Fatalf("an allowed line names %q, not the checked address:\n%s", l.IP, l.raw)
			}
		}
	})
	for _, proto := range psbProtocols {
		t.Run("public/"+proto.name, func(t *testing.T) {
			name := "public-" + proto.name + ".moat.test"
			url := fmt.Sprintf("http://%s:%d/", name, target.port)
			o, _ := p.sb.Command("sh", "-c", "curl -sS --max-time 3 "+psbArgs(proto.args, url)).CombinedOutput()
			if strings.Contains(string(o), "TARGET") {
				t.Fatalf("the connection reached the loopback server:\n%s", o)
			}
			if n := r.lookups(name); n != 1 {
				t.Fatalf("%d lookups for one request, want 1", n)
			}
			p.expect(t, psbWant{proto.name, name, target.port, true, "203.0.113.7", `matches "*.moat.test"`})
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
	psbNeed(t, "curl")
	srv := newPSBServer(t, "127.0.0.1:0", "psb-audited\n")
	r := newPSBResolver()
	r.set("app.moat.test", "127.0.0.1")
	policy, _ := moat.AllowList("app.moat.test")
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
			sb := psbNew(t, r, moat.Config{Network: tc.policy(t), AllowLocal: psbPrefixes("127.0.0.1/32")})
			for _, proto := range psbProtocols {
				hits, conns := srv.hits.Load(), srv.conns.Load()
				status, body, out := psbCurl(t, sb, psbArgs(proto.args, url))
				if tc.ok {
					if status != "200" || body != "psb-audited\n" {
						t.Fatalf("%s: got %s %q, want 200:\n%s", proto.name, status, body, out)
					}
					continue
				}
				want := "403"
				if proto.name == "socks5" {
					want = "refused"
				}
				if status != want {
					t.Fatalf("%s: got %s %q, want %s:\n%s", proto.name, status, body, want, out)
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

// psbFDs lists this process's descriptors, each with what it points to.
func psbFDs(t *testing.T) map[string]string {
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

// psbSettle waits up to 10s for the goroutine count to fall to at most
// goroutines and for the descriptors to be exactly fds (the ReadDir handle
// itself aside), and describes what is left otherwise.
func psbSettle(t *testing.T, goroutines int, fds map[string]string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := runtime.NumGoroutine()
		now := psbFDs(t)
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
		// The directory handle of the listing is one descriptor that
		// comes and goes with each call; it appears in both lists with
		// the same number, pointing at /proc/<pid>/fd.
		extra = psbDropListing(extra)
		missing = psbDropListing(missing)
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

func psbDropListing(l []string) []string {
	out := l[:0]
	for _, s := range l {
		if !strings.HasSuffix(s, "/fd") {
			out = append(out, s)
		}
	}
	return out
}

// psbConcurrent makes n requests to argv[1] at once through $HTTP_PROXY,
// each on its own connection, and prints how many succeeded.
const psbConcurrent = `
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
        if body == b"psb-many\n":
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
	psbNeed(t, "python3")
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
		io.WriteString(w, "psb-many\n")
	})}
	srv.SetKeepAlivesEnabled(false)
	go srv.Serve(ln)
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	url := fmt.Sprintf("http://many.moat.test:%d/", port)
	r := newPSBResolver()
	r.set("many.moat.test", "127.0.0.1")
	policy, _ := moat.AllowList("many.moat.test")
	cfg := func(log *moat.NetworkAuditLog) moat.Config {
		return moat.Config{Network: moat.Audited(policy, log), AllowLocal: psbPrefixes("127.0.0.1/32")}
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
		restore := moat.SetProxyResolver(r)
		sb, err := moat.New(cfg(log))
		restore()
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		current.Store(&gate{n: 1, all: make(chan struct{})})
		out, err := sb.Command("python3", "-c", psbConcurrent, url, "1").CombinedOutput()
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
	fds := psbFDs(t)

	path := filepath.Join(dir, "audit.jsonl")
	log, err := moat.OpenAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	restore := moat.SetProxyResolver(r)
	sb, err := moat.New(cfg(log))
	restore()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sb.Command("python3", "-c", psbConcurrent, url, strconv.Itoa(n)).CombinedOutput()
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
	lines := psbReadAudit(t, path)
	allowed := 0
	for _, l := range lines {
		if l.Allowed && l.Protocol == "http" && l.Host == "many.moat.test" && l.Port == port && l.IP == "127.0.0.1" {
			allowed++
		}
	}
	if len(lines) != n || allowed != n {
		t.Fatalf("audit has %d line(s), %d of them allowed requests, want exactly %d", len(lines), allowed, n)
	}
	if left := psbSettle(t, goroutines, fds); left != "" {
		t.Fatalf("after Close: %s", left)
	}
}

// psbSOCKS5 runs a SOCKS5 handshake on c: greeting with methods, then, if
// the server picks username/password, user and pass, then CONNECT to
// host:port. It returns the server's method choice, the auth status
// (-1 when not reached) and the CONNECT reply code (-1 when not reached).
func psbSOCKS5(c net.Conn, methods []byte, user, pass, host string, port int) (method, auth, reply int) {
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

// psbHTTP sends one raw request on a new connection to addr and returns
// the status code.
func psbHTTP(t *testing.T, addr, request string) int {
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

// TestNetworkSandboxWithoutNamespaces: on a host without user namespaces
// the proxy listens on the host's loopback at the port of sb.ProxyURL(),
// and Landlock lets the sandbox connect to that port only. The sandbox's
// clients work through it; from the host, a request without the credential
// (or with a wrong one) gets 407 and SOCKS5 without authentication is
// refused, while the credential works; from the sandbox, a direct connect
// to another host loopback port fails while the proxy's port connects. The
// report names the Landlock port rule, and after Close the port refuses
// connections.
func TestNetworkSandboxWithoutNamespaces(t *testing.T) {
	psbNeed(t, "curl", "python3")
	srv := newPSBServer(t, "127.0.0.1:0", "psb-nons\n")
	r := newPSBResolver()
	r.set("app.moat.test", "127.0.0.1")
	policy, _ := moat.AllowList("app.moat.test")
	p := newPSB(t, r, moat.Config{Network: policy, AllowLocal: psbPrefixes("127.0.0.1/32")})
	moat.DisableNamespaces(p.sb)
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
	if out, err := sb.Command("true").CombinedOutput(); err != nil {
		t.Fatalf("true: %v\n%s", err, out)
	}
	t.Run("proxy listens on the host", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err != nil {
			t.Fatalf("nothing listens on %s, the port of ProxyURL: %v", addr, err)
		}
		c.Close()
	})
	t.Run("sandbox clients", func(t *testing.T) {
		target := fmt.Sprintf("http://app.moat.test:%d/", srv.port)
		for _, proto := range psbProtocols {
			status, body, out := psbCurl(t, sb, psbArgs(proto.args, target))
			if status != "200" || body != "psb-nons\n" {
				t.Fatalf("%s: got %s %q:\n%s", proto.name, status, body, out)
			}
			p.expect(t, psbWant{proto.name, "app.moat.test", srv.port, true, "127.0.0.1", `matches "app.moat.test"`})
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
			if got := psbHTTP(t, addr, tc.req); got != tc.want {
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
			m, a, rep := psbSOCKS5(c, tc.methods, tc.user, tc.pass, "app.moat.test", srv.port)
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
			psbWant{"http", "app.moat.test", srv.port, true, "127.0.0.1", "matches"},
			psbWant{"connect", "app.moat.test", srv.port, true, "127.0.0.1", "matches"},
			psbWant{"socks5", "app.moat.test", srv.port, true, "127.0.0.1", "matches"})
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
		out, err := sb.Command("python3", "-c", prog, strconv.Itoa(srv.port), u.Port()).CombinedOutput()
		if err != nil {
			t.Fatalf("probe: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), u.Port()+" OK") {
			t.Fatalf("the sandbox cannot connect to its proxy's port:\n%s", out)
		}
		if !strings.Contains(string(out), strconv.Itoa(srv.port)+" ERRNO") || srv.conns.Load() != conns {
			t.Fatalf("the sandbox connected straight to a host loopback port:\n%s", out)
		}
		host, err := hostRun("python3", "-c", prog, strconv.Itoa(srv.port))
		if err != nil || !strings.Contains(host, strconv.Itoa(srv.port)+" OK") {
			t.Fatalf("control: the host cannot connect to its own server: %v\n%s", err, host)
		}
		t.Logf("sandbox: %s", strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", "; "))
	})
	t.Run("closed after Close", func(t *testing.T) {
		if err := sb.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if c, err := net.DialTimeout("tcp", addr, 3*time.Second); err == nil {
			c.Close()
			t.Fatalf("%s still accepts connections after Close", addr)
		}
	})
}

// psbListening reports whether a TCP socket listens on port in this
// network namespace, from /proc/net/tcp and tcp6.
func psbListening(t *testing.T, port int) bool {
	t.Helper()
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
	psbNeed(t, "python3")
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
	r := newPSBResolver()
	r.set("hold.moat.test", "127.0.0.1")
	policy, _ := moat.AllowList("hold.moat.test")

	runtime.GC()
	goroutines := runtime.NumGoroutine()
	restore := moat.SetProxyResolver(r)
	sb, err := moat.New(moat.Config{Network: policy, AllowLocal: psbPrefixes("127.0.0.1/32")})
	restore()
	if err != nil {
		t.Fatal(err)
	}
	closedSB := false
	defer func() {
		if !closedSB {
			sb.Close()
		}
	}()
	if !sb.Report().Active("namespaces") {
		t.Skipf("SKIPPING: namespaces are inactive on this host, and this test is about the namespace mode:\n%s", sb.Report())
	}
	pu, err := url.Parse(sb.ProxyURL())
	if err != nil {
		t.Fatal(err)
	}
	proxyPort, _ := strconv.Atoi(pu.Port())
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
	if psbListening(t, proxyPort) {
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
	if z := zygotePids(t); len(z) != 0 {
		t.Fatalf("zygotes left after Close: %v", z)
	}
	if psbListening(t, proxyPort) {
		t.Fatalf("something listens on the proxy's port %d after Close", proxyPort)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(proxyPort), time.Second); err == nil {
		c.Close()
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
