//go:build linux

package escape_test

// Helpers of the network-policy tests: sandboxes whose only way out is their
// policy proxy, with every decision audited to a file; test servers on the
// host's loopback (HTTP, HTTPS, a smart-HTTP git server, a PEP 503 package
// index); and the parsing of the audit file and of curl's answers.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// auditEntry is one line of a network audit log, as moattest.ReadAudit
// decodes it.
type auditEntry = moattest.AuditEntry

// readAudit decodes every line of the audit file at path, failing the test
// on a line that is not one complete JSON object with the documented keys.
func readAudit(t *testing.T, path string) []auditEntry {
	t.Helper()
	return moattest.ReadAudit(t, path)
}

// wantAudit is what one audit line must say. ips lists the acceptable
// values of its ip key ("" alone: the key must be absent); reason must be a
// substring of the line's reason.
type wantAudit struct {
	protocol, host string
	port           int
	allowed        bool
	ips            []string
	reason         string
}

// loopbackIPs are what "localhost" may resolve to on a test host: with both
// in AllowLocal, either one is dialed first.
var loopbackIPs = []string{"127.0.0.1", "::1"}

func (w wantAudit) check(e auditEntry) string {
	var bad []string
	if e.Protocol != w.protocol {
		bad = append(bad, fmt.Sprintf("protocol %q, want %q", e.Protocol, w.protocol))
	}
	if e.Host != w.host {
		bad = append(bad, fmt.Sprintf("host %q, want %q", e.Host, w.host))
	}
	if e.Port != w.port {
		bad = append(bad, fmt.Sprintf("port %d, want %d", e.Port, w.port))
	}
	if e.Allowed != w.allowed {
		bad = append(bad, fmt.Sprintf("allowed %v, want %v", e.Allowed, w.allowed))
	}
	ips := w.ips
	if ips == nil {
		ips = []string{""}
	}
	okIP := false
	for _, ip := range ips {
		okIP = okIP || e.IP == ip
	}
	if !okIP {
		bad = append(bad, fmt.Sprintf("ip %q, want one of %q", e.IP, ips))
	}
	if !strings.Contains(e.Reason, w.reason) {
		bad = append(bad, fmt.Sprintf("reason %q, want it to contain %q", e.Reason, w.reason))
	}
	return strings.Join(bad, "; ")
}

// proxied is a sandbox whose policy is audited to a file of its own.
type proxied struct {
	sb    *moat.Sandbox
	log   *moat.NetworkAuditLog
	audit string // the audit file
	seen  int    // audit lines already checked
}

// newProxied creates a sandbox with policy, audited, and the AllowLocal
// prefixes given. The log is closed after the sandbox, when the test ends.
func newProxied(t *testing.T, policy moat.NetworkPolicy, allowLocal ...string) *proxied {
	t.Helper()
	return newProxiedConfig(t, moat.Config{Network: policy, AllowLocal: parsePrefixes(allowLocal...)})
}

// allowList builds an allow-list policy or fails the test.
func allowList(t *testing.T, patterns ...string) *moat.AllowListPolicy {
	t.Helper()
	p, err := moat.AllowList(patterns...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// expect checks the audit lines written since the last call against want,
// one for one and in order.
func (p *proxied) expect(t *testing.T, want ...wantAudit) []auditEntry {
	t.Helper()
	all := readAudit(t, p.audit)
	got := all[p.seen:]
	p.seen = len(all)
	var b strings.Builder
	for _, e := range got {
		b.WriteString("  " + e.Raw + "\n")
	}
	if len(got) != len(want) {
		t.Fatalf("audit: %d new line(s), want %d:\n%s", len(got), len(want), b.String())
	}
	for i, w := range want {
		if why := w.check(got[i]); why != "" {
			t.Fatalf("audit line %d: %s:\n%s", p.seen-len(got)+i+1, why, b.String())
		}
	}
	for _, e := range all {
		if e.Sandbox != all[0].Sandbox {
			t.Fatalf("audit lines name two sandboxes, %q and %q", all[0].Sandbox, e.Sandbox)
		}
	}
	return got
}

// proxyPort is the port of sb's proxy, from sb.ProxyURL().
func proxyPort(t *testing.T, sb *moat.Sandbox) int {
	t.Helper()
	u, err := url.Parse(sb.ProxyURL())
	if err != nil || u.Port() == "" {
		t.Fatalf("ProxyURL %q: %v", sb.ProxyURL(), err)
	}
	n, _ := strconv.Atoi(u.Port())
	return n
}

// httpTarget is an HTTP (or HTTPS) server on the host's loopback that
// answers every request with body, and counts requests and connections
// (moattest.HTTPServer, with the battery's short names for its port and
// counters).
type httpTarget struct {
	*moattest.HTTPServer
	port        int
	hits, conns *atomic.Int32 // requests served, connections accepted
}

func newHTTPTarget(t *testing.T, body string, tls bool) *httpTarget {
	t.Helper()
	return newHTTPTargetAt(t, "127.0.0.1:0", body, tls)
}

// newHTTPTargetAt is newHTTPTarget listening on addr (host:port).
func newHTTPTargetAt(t *testing.T, addr, body string, tls bool) *httpTarget {
	t.Helper()
	s := moattest.NewHTTPServer(t, addr, body, tls)
	return &httpTarget{HTTPServer: s, port: s.Port, hits: &s.Hits, conns: &s.Conns}
}

// curlResult is curl's answer as a -w format reports it.
type curlResult struct {
	body    string
	code    string // %{http_code}: the final response, 000 for none
	connect string // %{http_connect}: the proxy's answer to CONNECT
	exit    string
	r       result
}

// curlFmt ends curl's output with a marker line that curlParse reads.
const curlFmt = `-w '\nMOAT-CURL code=%{http_code} connect=%{http_connect}\n'`

var curlMarker = regexp.MustCompile(`\nMOAT-CURL code=(\d+) connect=(\d+)\nEXIT=(\d+)\n?$`)

// curlParse reads the status line that curlFmt adds to curl's output.
func curlParse(t *testing.T, r result) curlResult {
	t.Helper()
	m := curlMarker.FindStringSubmatchIndex(r.Stdout)
	if m == nil {
		t.Fatalf("curl printed no status line: %s", r)
	}
	s := r.Stdout
	return curlResult{body: s[:m[0]], code: s[m[2]:m[3]], connect: s[m[4]:m[5]], exit: s[m[6]:m[7]], r: r}
}

// refusalLine checks that a proxy refusal's body is exactly one line naming
// the policy and the host.
func refusalLine(t *testing.T, c curlResult, policy, host string) {
	t.Helper()
	body := c.body
	if strings.Count(body, "\n") != 1 || !strings.HasSuffix(body, "\n") {
		t.Fatalf("refusal body is not one line: %q\n%s", body, c.r)
	}
	want := "moat: network policy " + policy + ": " + strconv.Quote(host) + " is not allowed: "
	if !strings.HasPrefix(body, want) {
		t.Fatalf("refusal body %q, want it to start with %q", body, want)
	}
}

// gitServer serves the bare repositories under a fresh root over git's
// smart HTTP protocol, through git http-backend run as CGI, on the host's
// loopback. It holds one repository, repo.git, whose payload.txt is
// payload.
type gitServer struct {
	port int
	hits atomic.Int32
}

func newGitServer(t *testing.T, payload string) *gitServer {
	t.Helper()
	need(t, "git")
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git http-backend is missing: %v", err)
	}
	dir := t.TempDir()
	src, root := filepath.Join(dir, "src"), filepath.Join(dir, "root")
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=moat", "GIT_AUTHOR_EMAIL=moat@test.invalid",
			"GIT_COMMITTER_NAME=moat", "GIT_COMMITTER_EMAIL=moat@test.invalid")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q", src)
	if err := moattest.WriteFile(filepath.Join(src, "payload.txt"), []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	git("-C", src, "add", "payload.txt")
	git("-C", src, "commit", "-q", "-m", "moat git probe")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	git("clone", "-q", "--bare", src, filepath.Join(root, "repo.git"))

	g := &gitServer{}
	h := &cgi.Handler{
		Path: backend,
		Root: "/git",
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return g
}

// pipIndex is a PEP 503 simple index on the host's loopback serving one
// package, moatprobe 0.1, as a pure-Python wheel built here.
type pipIndex struct {
	port  int
	hits  atomic.Int32
	wheel string // the wheel's file name
}

const pipPackage, pipVersion = "moatprobe", "0.1"

func newPipIndex(t *testing.T) *pipIndex {
	t.Helper()
	whl := buildWheel(t)
	sum := sha256.Sum256(whl)
	name := pipPackage + "-" + pipVersion + "-py3-none-any.whl"
	idx := &pipIndex{wheel: name}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/"+pipPackage+"/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!DOCTYPE html><html><body><a href=\"/files/%s#sha256=%s\">%s</a></body></html>\n",
			name, hex.EncodeToString(sum[:]), name)
	})
	mux.HandleFunc("/files/"+name, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(whl)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		idx.hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	idx.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return idx
}

// buildWheel returns a minimal, valid pure-Python wheel of moatprobe.
func buildWheel(t *testing.T) []byte {
	t.Helper()
	whl, err := moattest.Wheel(pipPackage, pipVersion, "moat escape battery probe",
		moattest.WheelFile{Name: pipPackage + "/__init__.py", Content: "MOAT = 'pip-probe'\n"})
	if err != nil {
		t.Fatal(err)
	}
	return whl
}

// needPip skips, loudly, the pip case when the host's python3 has no pip:
// ./test.sh must then install the python3-pip package.
func needPip(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("python3", "-m", "pip", "--version").CombinedOutput(); err != nil {
		t.Skipf("SKIPPING: python3 has no pip module (install the python3-pip package in ./test.sh): %v\n%s", err, out)
	}
}

// dialRefused reports whether a TCP connect from the host to addr fails,
// and how.
func dialRefused(addr string) (bool, error) {
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return true, err
	}
	c.Close()
	return false, nil
}
