package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestHTTPForward(t *testing.T) {
	o := startOrigin(t, false)
	explicitLoopback := func(_ context.Context, r Request) Decision {
		return Decision{Allow: r.Host == "127.0.0.1", ExplicitIP: true, Reason: "named in policy"}
	}
	tests := []struct {
		name       string
		check      func(context.Context, Request) Decision
		allowLocal []netip.Prefix
		url        string
		status     int
		body       string // exact body; "" = don't check
		record     Record // Time is not compared
	}{
		{
			name: "allowed name", check: allowHosts("allowed.test"), allowLocal: loopback,
			url:    fmt.Sprintf("http://allowed.test:%d/x?y=1", o.port),
			status: 200, body: "hello from /x",
			record: Record{Protocol: "http", Host: "allowed.test", Port: o.port, IP: "127.0.0.1", Allowed: true, Reason: "host in allow-list"},
		},
		{
			name: "name normalized", check: allowHosts("allowed.test"), allowLocal: loopback,
			url:    fmt.Sprintf("http://ALLOWED.test.:%d/x", o.port),
			status: 200, body: "hello from /x",
			record: Record{Protocol: "http", Host: "allowed.test", Port: o.port, IP: "127.0.0.1", Allowed: true, Reason: "host in allow-list"},
		},
		{
			name: "denied name", check: allowHosts("allowed.test"), allowLocal: loopback,
			url:    fmt.Sprintf("http://denied.test:%d/", o.port),
			status: 403, body: `moat: network policy allow-list: "denied.test" is not allowed: host not in allow-list` + "\n",
			record: Record{Protocol: "http", Host: "denied.test", Port: o.port, Reason: "host not in allow-list"},
		},
		{
			name: "denied without reason", check: func(context.Context, Request) Decision { return Decision{} },
			url:    "http://denied.test/",
			status: 403, body: `moat: network policy allow-list: "denied.test" is not allowed: denied by policy` + "\n",
			record: Record{Protocol: "http", Host: "denied.test", Port: 80, Reason: "denied by policy"},
		},
		{
			name: "unresolvable", check: allowHosts("nowhere.test"),
			url:    "http://nowhere.test/",
			status: 502, body: `moat: proxy: "nowhere.test": cannot resolve: no such host` + "\n",
			record: Record{Protocol: "http", Host: "nowhere.test", Port: 80, Reason: "cannot resolve: no such host"},
		},
		{
			name: "explicit ip literal", check: explicitLoopback,
			url:    fmt.Sprintf("http://127.0.0.1:%d/lit", o.port),
			status: 200, body: "hello from /lit",
			record: Record{Protocol: "http", Host: "127.0.0.1", Port: o.port, IP: "127.0.0.1", Allowed: true, Reason: "named in policy"},
		},
		{
			name: "connection refused", check: allowHosts("allowed.test"), allowLocal: loopback,
			url:    fmt.Sprintf("http://allowed.test:%d/", closedPort(t)),
			status: 502,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := &auditLog{}
			_, addr := startProxy(t, Config{
				PolicyName: "allow-list",
				Check:      tc.check,
				Audit:      log.write,
				Resolver:   newResolver().set("allowed.test", "127.0.0.1").set("denied.test", "127.0.0.1"),
				AllowLocal: tc.allowLocal,
			})
			status, body, hdr := get(t, clientVia(t, "http://"+addr, nil), tc.url)
			if status != tc.status {
				t.Fatalf("status %d, want %d (body %q)", status, tc.status, body)
			}
			if tc.body != "" && body != tc.body {
				t.Errorf("body %q, want %q", body, tc.body)
			}
			if status != 200 && !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
				t.Errorf("Content-Type %q", hdr.Get("Content-Type"))
			}
			if tc.record.Host == "" {
				return
			}
			got := log.last(t)
			if time.Since(got.Time) > time.Minute {
				t.Errorf("record time %v", got.Time)
			}
			got.Time = time.Time{}
			if got != tc.record {
				t.Errorf("record %+v\nwant   %+v", got, tc.record)
			}
		})
	}
}

// closedPort returns a loopback port that nothing listens on.
func closedPort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestHTTPHopByHopHeaders(t *testing.T) {
	o := startOrigin(t, false)
	_, addr := startProxy(t, Config{
		Check:      allowHosts("allowed.test"),
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
	})
	c := rawProxy(t, addr)
	fmt.Fprintf(c, "GET http://allowed.test:%d/hop HTTP/1.1\r\n"+
		"Host: ignored.test\r\n"+
		"Connection: X-Secret-Req, keep-alive\r\n"+
		"X-Secret-Req: 1\r\n"+
		"Keep-Alive: timeout=5\r\n"+
		"Proxy-Authorization: Basic eDp5\r\n"+
		"Proxy-Connection: keep-alive\r\n"+
		"Te: trailers\r\n"+
		"Upgrade: websocket\r\n"+
		"X-Kept: yes\r\n\r\n", o.port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// What the origin received.
	got := strings.Split(resp.Header.Get("X-Origin-Headers"), ",")
	for _, h := range got {
		switch h {
		case "Connection", "X-Secret-Req", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Te", "Upgrade", "Trailer", "Transfer-Encoding":
			t.Errorf("origin received hop-by-hop header %s (all: %v)", h, got)
		}
	}
	if !strings.Contains(","+resp.Header.Get("X-Origin-Headers")+",", ",X-Kept,") {
		t.Errorf("origin did not receive X-Kept: %v", got)
	}
	if h := resp.Header.Get("X-Origin-Host"); h != fmt.Sprintf("allowed.test:%d", o.port) {
		t.Errorf("origin Host %q: want the request target's authority", h)
	}
	// What the client received.
	for _, h := range []string{"Connection", "X-Secret-Hop", "Keep-Alive", "Proxy-Authenticate", "Upgrade"} {
		if v, ok := resp.Header[h]; ok {
			t.Errorf("client received hop-by-hop header %s: %q", h, v)
		}
	}
	// The connection is still usable (keep-alive).
	fmt.Fprintf(c, "GET http://allowed.test:%d/again HTTP/1.1\r\nHost: x\r\n\r\n", o.port)
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("second request on the connection: %v %v", resp, err)
	}
}

// countingDial dials like net.Dialer and counts and records the addresses.
type countingDial struct {
	n     atomic.Int64
	mu    chan struct{}
	addrs []string
	// redirect maps a dialed address to the one really dialed (tests'
	// public-looking addresses to loopback servers).
	redirect map[string]string
}

func newCountingDial() *countingDial {
	d := &countingDial{mu: make(chan struct{}, 1), redirect: map[string]string{}}
	return d
}

func (d *countingDial) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	d.mu <- struct{}{}
	d.addrs = append(d.addrs, addr)
	to, ok := d.redirect[addr]
	<-d.mu
	if !ok {
		to = addr
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, to)
}

func (d *countingDial) dialed() []string {
	d.mu <- struct{}{}
	defer func() { <-d.mu }()
	return append([]string(nil), d.addrs...)
}

func TestHTTPKeepAliveAndPinning(t *testing.T) {
	o1, o2 := startOrigin(t, false), startOrigin(t, false)
	dial := newCountingDial()
	res := newResolver().set("one.test", "127.0.0.1").set("two.test", "127.0.0.1")
	log := &auditLog{}
	_, addr := startProxy(t, Config{
		Check:      allowHosts("one.test", "two.test"),
		Audit:      log.write,
		Resolver:   res,
		AllowLocal: loopback,
		Dial:       dial.dial,
	})
	c := clientVia(t, "http://"+addr, nil)
	for i := range 10 {
		status, body, _ := get(t, c, fmt.Sprintf("http://one.test:%d/%d", o1.port, i))
		if status != 200 || body != fmt.Sprintf("hello from /%d", i) {
			t.Fatalf("request %d: %d %q", i, status, body)
		}
	}
	if n := dial.n.Load(); n != 1 {
		t.Errorf("%d upstream dials for 10 keep-alive requests, want 1", n)
	}
	if n := res.lookups("one.test"); n != 1 {
		t.Errorf("%d lookups for 10 requests over one upstream connection, want 1", n)
	}
	if n := len(log.records()); n != 10 {
		t.Errorf("%d audit records, want one per request (10)", n)
	}

	// On one client connection, a request for another host must get its
	// own upstream connection, to its own server.
	rc := rawProxy(t, addr)
	br := bufio.NewReader(rc)
	for i, o := range []*origin{o1, o2, o1} {
		host := []string{"one.test", "two.test", "one.test"}[i]
		fmt.Fprintf(rc, "GET http://%s:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", host, o.port)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		want := o.Listener.Addr().String()
		if got := resp.Header.Get("X-Origin-Addr"); got != want {
			t.Errorf("request %d for %s answered by %s, want %s", i, host, got, want)
		}
	}
}

func TestHTTPUpstreamClosedWhileIdle(t *testing.T) {
	o := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	o.Config.IdleTimeout = 20 * time.Millisecond
	o.Start()
	t.Cleanup(o.Close)
	port := o.Listener.Addr().(*net.TCPAddr).Port
	dial := newCountingDial()
	_, addr := startProxy(t, Config{
		Check:      allowHosts("allowed.test"),
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
		Dial:       dial.dial,
	})
	c := clientVia(t, "http://"+addr, nil)
	for i := range 3 {
		if status, body, _ := get(t, c, fmt.Sprintf("http://allowed.test:%d/", port)); status != 200 || body != "ok" {
			t.Fatalf("request %d: %d %q", i, status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := dial.n.Load(); n != 3 {
		t.Errorf("%d dials, want 3 (the origin closed each idle connection)", n)
	}
}

func TestHTTPBodies(t *testing.T) {
	o := startOrigin(t, false)
	_, addr := startProxy(t, Config{
		Check:      allowHosts("allowed.test"),
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
	})
	c := clientVia(t, "http://"+addr, nil)
	c.Transport.(*http.Transport).ExpectContinueTimeout = 5 * time.Second
	base := fmt.Sprintf("http://allowed.test:%d", o.port)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	tests := []struct {
		name   string
		req    func() *http.Request
		status int
		body   string
		te     bool // want a chunked response
	}{
		{"post content-length", func() *http.Request {
			r, _ := http.NewRequest("POST", base+"/echo", strings.NewReader("payload"))
			return r
		}, 200, "payload", false},
		{"post chunked", func() *http.Request {
			r, _ := http.NewRequest("POST", base+"/echo", io.MultiReader(strings.NewReader("a"), strings.NewReader("b")))
			r.ContentLength = -1
			return r
		}, 200, "ab", false},
		{"post 1 MiB with Expect: 100-continue", func() *http.Request {
			r, _ := http.NewRequest("PUT", base+"/echo", bytes.NewReader(big))
			r.Header.Set("Expect", "100-continue")
			return r
		}, 200, string(big), true},
		{"chunked response", func() *http.Request {
			r, _ := http.NewRequest("GET", base+"/stream", nil)
			return r
		}, 200, "part0;part1;part2;", true},
		{"head", func() *http.Request {
			r, _ := http.NewRequest("HEAD", base+"/x", nil)
			return r
		}, 200, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.Do(tc.req())
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || string(b) != tc.body {
				t.Fatalf("%d %q (%d bytes), want %d %q", resp.StatusCode, clip(string(b)), len(b), tc.status, clip(tc.body))
			}
			if chunked := len(resp.TransferEncoding) > 0; chunked != tc.te {
				t.Errorf("transfer encoding %v", resp.TransferEncoding)
			}
		})
	}
}

// TestHTTPEarlyAnswer: an origin that answers before reading the request
// body. The client gets the answer, then the proxy gives up on both
// connections instead of hanging on the unsent body.
func TestHTTPEarlyAnswer(t *testing.T) {
	o := startOrigin(t, false)
	_, addr := startProxy(t, Config{
		Check:      allowHosts("allowed.test"),
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
	})
	c := rawProxy(t, addr)
	fmt.Fprintf(c, "POST http://allowed.test:%d/reject HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\nsome of it", o.port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d", resp.StatusCode)
	}
	start := time.Now()
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection carried on after an abandoned request body")
	}
	if d := time.Since(start); d > 3*bodyGrace {
		t.Errorf("hung up after %v", d)
	}
}

func TestHTTPBadRequests(t *testing.T) {
	o := startOrigin(t, false)
	tests := []struct {
		name   string
		req    string
		status int
		body   string // substring
	}{
		{"origin form", "GET /path HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "not in absolute form"},
		{"https absolute", "GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "use CONNECT"},
		{"missing host", "GET http:///x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400, "missing host"},
		{"userinfo", "GET http://allowed.test@evil.test/ HTTP/1.1\r\nHost: x\r\n\r\n", 400, "user information"},
		{"malformed", "GET\r\n\r\n", 400, "malformed request"},
		{"bad header", "GET http://allowed.test/ HTTP/1.1\r\nNo colon here\r\n\r\n", 400, "malformed request"},
		{"unsupported expect", fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n", o.port), 417, "not supported"},
		{"connect without port is 443", "CONNECT allowed.test HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 502, `"allowed.test:443": cannot connect`},
		{"connect empty host", "CONNECT :443 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "missing host"},
		{"connect unbracketed ipv6", "CONNECT ::1:443 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "moat: proxy: "},
		{"too large", "GET http://allowed.test/ HTTP/1.1\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n", 431, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := startProxy(t, Config{
				Check:          allowHosts("allowed.test"),
				Resolver:       newResolver().set("allowed.test", "127.0.0.1"),
				AllowLocal:     loopback,
				MaxHeaderBytes: 4 << 10,
			})
			c := rawProxy(t, addr)
			io.WriteString(c, tc.req)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.body) {
				t.Fatalf("%d %q, want %d and %q", resp.StatusCode, b, tc.status, tc.body)
			}
			if !strings.HasPrefix(string(b), "moat: ") || strings.Count(string(b), "\n") != 1 {
				t.Errorf("body %q is not one moat: line", b)
			}
		})
	}
}

func TestHTTPHeaderTimeout(t *testing.T) {
	for _, partial := range []string{"", "GET http://allowed.test/ HTTP/1.1\r\nHost: a"} {
		t.Run(strconv.Quote(partial), func(t *testing.T) {
			_, addr := startProxy(t, Config{Check: allowHosts(), HeaderTimeout: 100 * time.Millisecond})
			c := rawProxy(t, addr)
			io.WriteString(c, partial)
			start := time.Now()
			n, err := c.Read(make([]byte, 1))
			if n != 0 || err == nil {
				t.Fatalf("read %d, %v; want the proxy to hang up", n, err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("hung up after %v", d)
			}
		})
	}
}

func TestHTTPIdleTimeout(t *testing.T) {
	o := startOrigin(t, false)
	_, addr := startProxy(t, Config{
		Check:       allowHosts("allowed.test"),
		Resolver:    newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal:  loopback,
		IdleTimeout: 100 * time.Millisecond,
	})
	c := rawProxy(t, addr)
	fmt.Fprintf(c, "GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", o.port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want EOF", err)
	}
}

func TestHTTPCredential(t *testing.T) {
	o, tlsOrigin := startOrigin(t, false), startOrigin(t, true)
	_, addr := startProxy(t, Config{
		Check:      allowHosts("allowed.test"),
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
		Credential: "s3cret",
	})
	target := fmt.Sprintf("http://allowed.test:%d/x", o.port)
	tests := []struct {
		name   string
		proxy  string
		status int
	}{
		{"none", "http://" + addr, 407},
		{"wrong password", "http://moat:guess@" + addr, 407},
		{"wrong user", "http://root:s3cret@" + addr, 407},
		{"right", "http://moat:s3cret@" + addr, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// CONNECT first: the Go client reports a refused tunnel
			// as an error naming the status.
			_, err := clientVia(t, tc.proxy, tlsOrigin).Get(fmt.Sprintf("https://allowed.test:%d/", tlsOrigin.port))
			if tc.status == 200 && err != nil || tc.status == 407 && (err == nil || !strings.Contains(err.Error(), "Proxy Authentication Required")) {
				t.Errorf("CONNECT: %v, want status %d", err, tc.status)
			}
			status, body, hdr := get(t, clientVia(t, tc.proxy, nil), target)
			if status != tc.status {
				t.Fatalf("status %d (%q), want %d", status, body, tc.status)
			}
			if status == 407 {
				if got := hdr.Get("Proxy-Authenticate"); got != `Basic realm="moat"` {
					t.Errorf("Proxy-Authenticate %q", got)
				}
				if body != "moat: proxy: authentication required\n" {
					t.Errorf("body %q", body)
				}
			}
		})
	}
}
