//go:build linux

package escape_test

// The proxy and the audit log are host-side parsers of what a sandbox
// sends: these tests attack their bounds from inside a sandbox. A sandbox
// that opens more keep-alive connections than the proxy's cap gets the
// extra ones refused, and moat's descriptors stay bounded; a sandbox that
// floods refused requests gets a bounded log that still carries the true
// count; a sandbox that floods distinct refusals past its share of the log
// gets the log truncated, and can then reach no destination the log never
// named.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// proxyCap is the proxy's connection cap per sandbox (proxy.Config.MaxConns
// by default).
const proxyCap = 256

// holdConns is a Python program that opens argv[2] connections to the
// sandbox's proxy one after another, asks argv[1] over each with a
// keep-alive GET, and keeps the ones that were answered 200 open. It
// prints "RESULT ok=N refused=N closed=N other=N", where refused are 503
// answers naming the cap (closed at once by the client) and closed are
// connections the proxy closed without an answer, then waits for its
// stdin to end before closing the rest.
const holdConns = `
import base64, os, socket, sys, urllib.parse
u = urllib.parse.urlparse(os.environ["HTTP_PROXY"])
auth = base64.b64encode(("%s:%s" % (u.username, u.password)).encode()).decode()
target, n = sys.argv[1], int(sys.argv[2])
req = ("GET %s HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic %s\r\n\r\n" % (target, auth)).encode()
ok = refused = closed = other = 0
held = []
for i in range(n):
    s = socket.create_connection((u.hostname, u.port))
    s.settimeout(10)
    try:
        s.sendall(req)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        data = b""
    if b"\r\n\r\n" not in data:
        closed += 1
        s.close()
        continue
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    status = head.split(b" ")[1]
    if status == b"200":
        ok += 1
        held.append(s)
    elif status == b"503" and b"too many connections" in body:
        refused += 1
        s.close()
    else:
        other += 1
        sys.stderr.write("unexpected answer: %r\n" % data[:300])
        s.close()
print("RESULT ok=%d refused=%d closed=%d other=%d" % (ok, refused, closed, other), flush=True)
sys.stdin.read()
`

// hostUsage is this process's descriptor count and resident memory: the
// proxy runs in it.
func hostUsage(t *testing.T) (fds int, rssKiB int) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			rssKiB, _ = strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return len(ents), rssKiB
}

// TestProxyBoundsConnCap (G-proxy-conns): a sandbox opens proxyCap+N
// keep-alive connections through its proxy and holds every one that was
// served. Exactly proxyCap are served; the N others are refused with a 503
// that names the cap (or closed unanswered); while they are held, moat's
// descriptors grow by at most three per served connection (client,
// upstream, and the test's own origin server, which runs in this process)
// and its memory by a bounded amount; the refusals are in the audit log,
// aggregated, with their true count, and in Refusals. The control opens
// proxyCap-1 connections, and every one is served.
func TestProxyBoundsConnCap(t *testing.T) {
	// Not parallel: it measures this process's descriptors.
	need(t, "python3")
	target := newHTTPTarget(t, "moat-conncap\n", false)
	url := fmt.Sprintf("http://localhost:%d/", target.port)
	const extra = 1000
	for _, tc := range []struct {
		name    string
		n       int
		wantOK  int
		refused int
	}{
		{"control: one under the cap", proxyCap - 1, proxyCap - 1, 0},
		{"at the cap", proxyCap, proxyCap, 0},
		{"cap plus 1000", proxyCap + extra, proxyCap, extra},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxiedConfig(t, moat.Config{Network: allowList(t, "localhost"),
				AllowLocal: parsePrefixes(localhostOK...), Limits: moat.Limits{OpenFiles: 4 * (proxyCap + extra)}})
			needNamespaces(t, p.sb)
			baseFDs, baseRSS := hostUsage(t)
			c := p.sb.Command("python3", "-c", holdConns, url, strconv.Itoa(tc.n))
			stdin, err := c.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				stdin.Close()
				c.Wait()
				t.Fatalf("no result: %v\n%s", err, stderr.String())
			}
			// The sandbox holds its connections now.
			fds, rss := hostUsage(t)
			stdin.Close()
			io.Copy(io.Discard, stdout)
			if err := c.Wait(); err != nil {
				t.Fatalf("probe: %v\n%s", err, stderr.String())
			}
			var ok, refused, closed, other int
			if _, err := fmt.Sscanf(line, "RESULT ok=%d refused=%d closed=%d other=%d", &ok, &refused, &closed, &other); err != nil {
				t.Fatalf("result %q: %v", line, err)
			}
			t.Logf("served %d, refused %d with a 503, %d closed unanswered; moat's descriptors %d -> %d, RSS %d -> %d KiB",
				ok, refused, closed, baseFDs, fds, baseRSS, rss)
			if ok != tc.wantOK || refused+closed != tc.refused || other != 0 {
				t.Fatalf("served %d, refused %d+%d, other %d; want %d served, %d refused\n%s",
					ok, refused, closed, other, tc.wantOK, tc.refused, stderr.String())
			}
			if tc.refused > 0 && refused == 0 {
				t.Errorf("no refused connection got the 503 that says why")
			}
			if grow := fds - baseFDs; grow > 3*proxyCap+64 {
				t.Errorf("moat's descriptors grew by %d while the sandbox held %d connections (bound %d)", grow, tc.n, 3*proxyCap+64)
			}
			if grow := rss - baseRSS; grow > 64<<10 {
				t.Errorf("moat's RSS grew by %d KiB while the sandbox held %d connections", grow, tc.n)
			}

			p.sb.Close() // writes the counts still pending
			var full int
			var total int64
			for _, e := range readAudit(t, p.audit) {
				if strings.HasPrefix(e.Reason, "too many connections") {
					if e.Allowed || e.Host != "" {
						t.Errorf("cap refusal line %s", e.Raw)
					}
					if e.Repeated == 0 {
						full++
					}
					total += max(e.Repeated, 1)
				}
			}
			if total != int64(tc.refused) || full > 5 {
				t.Errorf("audit: %d cap refusals counted (%d lines in full), want %d (at most 5 in full)", total, full, tc.refused)
			}
			var listed bool
			for _, r := range p.sb.Refusals() {
				listed = listed || r.Kind == "limit" && r.Subject == "proxy connections"
			}
			if listed != (tc.refused > 0) {
				t.Errorf("Refusals lists the cap: %v, want %v: %v", listed, tc.refused > 0, p.sb.Refusals())
			}
		})
	}
}

// floodRefused is a Python program that sends argv[2] requests for
// http://argv[1]/ over one keep-alive connection to the proxy, each
// refused by the policy, then one request for each of the argv[3] hosts
// d0.argv[1] ..., pipelined in batches of 100. It prints "RESULT n403=N".
const floodRefused = `
import base64, os, socket, sys, urllib.parse
u = urllib.parse.urlparse(os.environ["HTTP_PROXY"])
auth = base64.b64encode(("%s:%s" % (u.username, u.password)).encode()).decode()
host, n, distinct = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.create_connection((u.hostname, u.port))
s.settimeout(30)
f = s.makefile("rb")
def answer():
    status = f.readline().split(b" ")[1]
    length = 0
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            break
        k, _, v = line.partition(b":")
        if k.lower() == b"content-length":
            length = int(v)
    f.read(length)
    return status
def ask(hosts):
    s.sendall(b"".join(("GET http://%s/ HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n" % (h, h, auth)).encode() for h in hosts))
    return sum(answer() == b"403" for h in hosts)
names = [host] * n + ["d%d.%s" % (i, host) for i in range(distinct)]
n403 = 0
for i in range(0, len(names), 100):
    n403 += ask(names[i:i+100])
print("RESULT n403=%d" % n403, flush=True)
`

// TestProxyBoundsAuditFlood (G-audit-bound): a sandbox sends 20,000
// requests its policy refuses, all alike, then 20 distinct ones. The log
// holds at most five lines of the flood in full and counts the rest into
// "repeated" lines whose sum is the true count; every distinct refusal has
// its own line (the control that the log records what it is given); and
// the log stays small.
func TestProxyBoundsAuditFlood(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	const flood, distinct = 20000, 20
	p := newProxied(t, allowList(t, "allowed.example"))
	r := python(t, p.sb, "import sys; sys.argv = ['x', 'denied.example', '"+strconv.Itoa(flood)+"', '"+strconv.Itoa(distinct)+"']\n"+floodRefused)
	if r.Err != nil || !strings.Contains(r.Stdout, fmt.Sprintf("RESULT n403=%d", flood+distinct)) {
		t.Fatalf("flood: %s", r)
	}
	p.sb.Close()
	fi, err := os.Stat(p.audit)
	if err != nil {
		t.Fatal(err)
	}
	entries := readAudit(t, p.audit)
	var full int
	var total int64
	seen := map[string]bool{}
	for _, e := range entries {
		switch {
		case e.Host == "denied.example":
			if e.Allowed || e.Protocol != "http" || e.Port != 80 || e.Reason == "" {
				t.Errorf("flood line %s", e.Raw)
			}
			if e.Repeated == 0 {
				full++
			}
			total += max(e.Repeated, 1)
		case strings.HasSuffix(e.Host, ".denied.example"):
			seen[e.Host] = true
		}
	}
	t.Logf("%d requests refused: %d lines, %d bytes", flood+distinct, len(entries), fi.Size())
	if total != flood || full > 5 {
		t.Errorf("the log counts %d of the %d refusals (%d lines in full, want at most 5)", total, flood, full)
	}
	if len(seen) != distinct {
		t.Errorf("%d of the %d distinct refusals have a line", len(seen), distinct)
	}
	if fi.Size() > 16<<10 {
		t.Errorf("the log is %d bytes after a flood of one refusal", fi.Size())
	}
}

// TestProxyBoundsAuditBudget (G-audit-bound): a sandbox floods distinct
// refusals past its share of the log (8 MiB). The log stays within the
// share, says once that it is truncated, and ends with a line that counts
// every decision not written. After the truncation a destination already
// recorded is still reached (the control), and a new one is refused as
// "audit log full", since the log could not name it.
func TestProxyBoundsAuditBudget(t *testing.T) {
	t.Parallel()
	need(t, "python3", "curl")
	known := newHTTPTarget(t, "moat-known\n", false)
	fresh := newHTTPTarget(t, "moat-fresh\n", false)
	p := newProxiedConfig(t, moat.Config{Network: allowList(t, "localhost", "127.0.0.1"),
		AllowLocal: parsePrefixes(localhostOK...)})
	knownURL := fmt.Sprintf("http://localhost:%d/", known.port)
	freshURL := fmt.Sprintf("http://127.0.0.1:%d/", fresh.port)
	if st, body, r := curlVia(t, p.sb, `--noproxy '' -x "$HTTP_PROXY" {URL}`, knownURL); st != "200" || body != "moat-known\n" {
		t.Fatalf("before the flood: %s %q\n%s", st, body, r)
	}
	// Each line is about 170 bytes: 60,000 distinct names are over 8 MiB.
	const n = 60000
	r := python(t, p.sb, "import sys; sys.argv = ['x', 'denied.example', '0', '"+strconv.Itoa(n)+"']\n"+floodRefused)
	if r.Err != nil || !strings.Contains(r.Stdout, fmt.Sprintf("RESULT n403=%d", n)) {
		t.Fatalf("flood: %s", r)
	}
	if st, body, r := curlVia(t, p.sb, `--noproxy '' -x "$HTTP_PROXY" {URL}`, knownURL); st != "200" || body != "moat-known\n" {
		t.Errorf("a recorded destination after the truncation: %s %q\n%s", st, body, r)
	}
	st, body, cr := curlVia(t, p.sb, `--noproxy '' -x "$HTTP_PROXY" {URL}`, freshURL)
	if st != "403" || !strings.Contains(body, "audit log full") {
		t.Errorf("a new destination after the truncation: %s %q, want 403 audit log full\n%s", st, body, cr)
	}
	if fresh.hits.Load() != 0 {
		t.Errorf("the new destination was reached %d times", fresh.hits.Load())
	}
	start := time.Now()
	p.sb.Close()
	t.Logf("Close took %v", time.Since(start))
	fi, err := os.Stat(p.audit)
	if err != nil {
		t.Fatal(err)
	}
	entries := readAudit(t, p.audit)
	var written, truncLines int
	for _, e := range entries {
		if strings.HasSuffix(e.Host, ".denied.example") {
			written++
		}
		if strings.HasPrefix(e.Reason, "audit log truncated: this sandbox's lines reached") {
			truncLines++
		}
	}
	last := entries[len(entries)-1]
	t.Logf("%d distinct refusals: %d written, log %d bytes; last line %s", n, written, fi.Size(), last.Raw)
	const share = 8 << 20
	if fi.Size() > share {
		t.Errorf("the log is %d bytes, share %d", fi.Size(), share)
	}
	if truncLines != 1 {
		t.Errorf("%d lines say the log is truncated, want 1", truncLines)
	}
	// Not written: the rest of the flood, the known destination's second
	// request, the refused new one.
	want := int64(n - written + 2)
	if !strings.HasPrefix(last.Reason, "audit log truncated: ") || last.Repeated != want {
		t.Errorf("last line %s, want a count of %d decisions not written", last.Raw, want)
	}
}

// dnsFlood is a Python program that sends argv[1] DNS queries over TCP to
// the sandbox's stub at 127.0.0.1:53, argv[3] to a connection, each padded
// inside its frame to argv[2] bytes, and prints "RESULT answered=N
// seconds=S": the answers it got, and how long they took.
const dnsFlood = `
import socket, struct, sys, time
n, size, per = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
q = struct.pack(">HHHHHH", 0x6d6f, 0x0100, 1, 0, 0, 0)
for label in b"flood.invalid".split(b"."):
    q += bytes([len(label)]) + label
q += b"\x00" + struct.pack(">HH", 1, 1)
q += b"\x00" * max(size - len(q), 0)
def recvall(s, k):
    b = b""
    while len(b) < k:
        c = s.recv(k - len(b))
        if not c:
            raise EOFError
        b += c
    return b
answered = 0
start = time.monotonic()
s = None
for i in range(n):
    if i % per == 0:
        if s:
            s.close()
        s = socket.create_connection(("127.0.0.1", 53), timeout=10)
    try:
        s.sendall(struct.pack(">H", len(q)) + q)
        recvall(s, struct.unpack(">H", recvall(s, 2))[0])
        answered += 1
    except (OSError, EOFError):
        s.close()
        s = None
        if i % per != per - 1:
            s = socket.create_connection(("127.0.0.1", 53), timeout=10)
print("RESULT answered=%d seconds=%.3f" % (answered, time.monotonic() - start), flush=True)
`

// TestProxyBoundsDNSStub (G-dns-bound): the sandbox's DNS stub answers at
// most 200 queries a second once a burst of 200 is spent, and no query
// over 4 KiB; a flood of queries therefore costs the host a bounded
// amount of work a second. Controls: a burst within the bound is
// answered at once, and a query of exactly 4 KiB is answered.
func TestProxyBoundsDNSStub(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	for _, tc := range []struct {
		name        string
		n, size     int
		answered    int
		least, most float64 // seconds
	}{
		{"control: 150 queries, within the burst", 150, 0, 150, 0, 1.0},
		{"600 queries: 400 past the burst", 600, 0, 600, 1.8, 30},
		{"control: a query of 4096 bytes", 1, 4096, 1, 0, 5},
		{"a query of 4097 bytes", 1, 4097, 0, 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t, moat.Config{})
			needNamespaces(t, sb)
			r := inSandbox(t, sb, "python3", "-c", dnsFlood, strconv.Itoa(tc.n), strconv.Itoa(tc.size), "64")
			var answered int
			var secs float64
			if _, err := fmt.Sscanf(r.Stdout, "RESULT answered=%d seconds=%f", &answered, &secs); err != nil {
				t.Fatalf("result: %v\n%s", err, r)
			}
			t.Logf("%d of %d answered in %.3f s", answered, tc.n, secs)
			if answered != tc.answered || secs < tc.least || secs > tc.most {
				t.Errorf("%d answered in %.3f s, want %d in [%.1f, %.1f] s", answered, secs, tc.answered, tc.least, tc.most)
			}
		})
	}
}
