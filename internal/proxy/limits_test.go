package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// keepAlive opens a client connection to the proxy at addr and completes
// one keep-alive GET of url over it, leaving it open and idle. It returns
// the connection and the response's status, 0 when there was none.
func keepAlive(t *testing.T, addr, url string) (net.Conn, *bufio.Reader, int, string) {
	t.Helper()
	c := rawProxy(t, addr)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", url)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return c, br, 0, err.Error()
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return c, br, resp.StatusCode, string(b)
}

// TestConnCapKeepAlive: a Server with MaxConns n serves n idle keep-alive
// client connections at once (the control), refuses the next ones with a
// one-line 503 and a ConnLimit audit record each, and serves a new one as
// soon as one of the n is closed.
func TestConnCapKeepAlive(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxConns   int
		extra      int
		wantServed int
	}{
		{"cap 1, at the cap", 1, 0, 1},
		{"cap 1, 1 past", 1, 1, 1},
		{"cap 4, at the cap", 4, 0, 4},
		{"cap 4, 1 past", 4, 1, 4},
		{"cap 4, 20 past", 4, 20, 4},
		{"default 256, at the cap", 0, 0, 256},
		{"default 256, 3 past", 0, 3, 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := startOrigin(t, false)
			log := &auditLog{}
			dial := newCountingDial()
			srv, addr := startProxy(t, Config{
				Check: allowHosts("allowed.test"), Audit: log.write, MaxConns: tc.maxConns,
				Resolver: newResolver().set("allowed.test", "127.0.0.1"), AllowLocal: loopback, Dial: dial.dial,
			})
			url := fmt.Sprintf("http://allowed.test:%d/", o.port)
			cap := tc.maxConns
			if cap == 0 {
				cap = defaultMaxConns
			}
			var held []net.Conn
			for i := range tc.wantServed {
				c, _, status, body := keepAlive(t, addr, url)
				if status != 200 {
					t.Fatalf("connection %d of %d: status %d %q, want 200", i+1, cap, status, body)
				}
				held = append(held, c)
			}
			want := fmt.Sprintf("moat: proxy: too many connections: this sandbox already has %d connections open to the proxy, the most it may; close idle ones and retry\n", cap)
			for i := range tc.extra {
				c, _, status, body := keepAlive(t, addr, url)
				if status != 503 || body != want {
					t.Fatalf("connection %d past the cap: %d %q, want 503 %q", i+1, status, body, want)
				}
				// Its answer is over once the client closes.
				c.Close()
				if !settle(func() bool { srv.mu.Lock(); defer srv.mu.Unlock(); return srv.refusing == 0 }) {
					t.Fatal("the refused connection is still being answered")
				}
			}
			var limited int
			for _, r := range log.records() {
				if r.ConnLimit {
					limited++
					if r.Allowed || r.Host != "" || r.Reason+"\n" != strings.TrimPrefix(want, "moat: proxy: ") {
						t.Errorf("ConnLimit record %+v", r)
					}
				}
			}
			if limited != tc.extra {
				t.Errorf("%d ConnLimit records, want %d", limited, tc.extra)
			}
			if n := int(dial.n.Load()); n > cap {
				t.Errorf("%d upstream dials for %d client connections", n, cap)
			}
			// The held connections still work, and closing one makes
			// room for a new one.
			if len(held) > 0 {
				fmt.Fprintf(held[0], "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", url)
				held[0].Close()
				if !settle(func() bool {
					c, _, status, _ := keepAlive(t, addr, url)
					c.Close()
					return status == 200
				}) {
					t.Errorf("no connection served after one of the %d was closed", cap)
				}
			}
		})
	}
}

// TestConnCapTunnels: CONNECT and SOCKS5 tunnels count against MaxConns,
// and the upstream connections they hold never outnumber it; a SOCKS5
// client past the cap gets "no acceptable method".
func TestConnCapTunnels(t *testing.T) {
	const cap = 3
	up, _ := halfCloseServer(t)
	log := &auditLog{}
	var open, most atomic.Int32
	_, addr := startProxy(t, Config{
		Check: allowHosts("allowed.test"), Audit: log.write, MaxConns: cap,
		Resolver: newResolver().set("allowed.test", "127.0.0.1"), AllowLocal: loopback,
		Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, a)
			if err == nil {
				n := open.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				c = &closeCounter{Conn: c, open: &open}
			}
			return c, err
		},
	})
	for i := range cap {
		if i%2 == 0 {
			_, _, resp := connectRaw(t, addr, fmt.Sprintf("allowed.test:%d", up), "")
			if resp.StatusCode != 200 {
				t.Fatalf("tunnel %d: %d", i+1, resp.StatusCode)
			}
		} else if _, rep := socksClient(t, addr, "", "", socksConnectTo("allowed.test", up)); rep != socksSucceeded {
			t.Fatalf("SOCKS5 tunnel %d: reply %#x", i+1, rep)
		}
	}
	c := rawProxy(t, addr)
	c.Write([]byte{socksVersion, 1, socksAuthNone})
	var rep [2]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil || rep != [2]byte{socksVersion, socksNoAcceptable} {
		t.Errorf("SOCKS5 past the cap: %x %v, want 05ff", rep, err)
	}
	c = rawProxy(t, addr)
	fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", up)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 503 {
		t.Errorf("CONNECT past the cap: %v %v", resp, err)
	}
	if m := most.Load(); m > cap {
		t.Errorf("%d upstream connections open at once, cap %d", m, cap)
	}
}

// closeCounter decrements open once when closed.
type closeCounter struct {
	net.Conn
	open *atomic.Int32
	done atomic.Bool
}

func (c *closeCounter) Close() error {
	if c.done.CompareAndSwap(false, true) {
		c.open.Add(-1)
	}
	return c.Conn.Close()
}

func (c *closeCounter) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// TestConnCapSilentFlood: connections past the cap that never send a byte
// cost the proxy neither descriptors nor goroutines beyond maxRefusing,
// each for at most refuseTime; the held connections are unaffected.
func TestConnCapSilentFlood(t *testing.T) {
	const cap, flood = 2, 300
	log := &auditLog{}
	_, addr := startProxy(t, Config{Check: allowHosts(), Audit: log.write, MaxConns: cap})
	for range cap {
		rawProxy(t, addr) // silent: held until the header timeout
	}
	base := countFDs()
	var conns []net.Conn
	for range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// Every flood connection is closed by the proxy: at most maxRefusing
	// after refuseTime, the others at once.
	deadline := time.Now().Add(2*refuseTime + 5*time.Second)
	for i, c := range conns {
		c.SetReadDeadline(deadline)
		if n, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatalf("flood connection %d: read %d bytes, want EOF", i, n)
		} else if time.Now().After(deadline) {
			t.Fatalf("flood connection %d still open: %v", i, err)
		}
	}
	// The proxy's side of them is gone: the test process holds the
	// client ends only.
	if n := countFDs(); n > base+flood+maxRefusing {
		t.Errorf("%d descriptors, %d before the flood of %d", n, base, flood)
	}
	var limited int
	for _, r := range log.records() {
		if r.ConnLimit {
			limited++
		}
	}
	if limited != flood {
		t.Errorf("%d ConnLimit records, want %d", limited, flood)
	}
}

// TestConnLimitConfig: MaxConns below zero is refused; zero means 256.
func TestConnLimitConfig(t *testing.T) {
	if _, err := New(Config{Check: allowHosts(), MaxConns: -1}); err == nil || !strings.Contains(err.Error(), "MaxConns") {
		t.Errorf("MaxConns -1: %v", err)
	}
	s, err := New(Config{Check: allowHosts()})
	if err != nil || s.cfg.MaxConns != 256 {
		t.Errorf("MaxConns 0: %v %d", err, s.cfg.MaxConns)
	}
}

// TestResponseHeaderLimit: an origin's response head of up to
// MaxHeaderBytes is passed on; one just past it is a 502, and the proxy
// held no more than the bound of it.
func TestResponseHeaderLimit(t *testing.T) {
	const limit = 8 << 10
	for _, tc := range []struct {
		name   string
		header int // bytes of one header's value
		want   int
	}{
		{"well under", 100, 200},
		{"at the bound", limit - 200, 200},
		{"just past (with the reader's buffer)", limit + 4096 + 1, 502},
		{"far past", 1 << 20, 502},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				http.ReadRequest(bufio.NewReader(c))
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Big: %s\r\nContent-Length: 2\r\n\r\nok", strings.Repeat("a", tc.header))
			}()
			port := ln.Addr().(*net.TCPAddr).Port
			_, addr := startProxy(t, Config{
				Check: allowHosts("allowed.test"), MaxHeaderBytes: limit,
				Resolver: newResolver().set("allowed.test", "127.0.0.1"), AllowLocal: loopback,
			})
			c, _, status, body := keepAlive(t, addr, fmt.Sprintf("http://allowed.test:%d/", port))
			c.Close()
			if status != tc.want {
				t.Fatalf("status %d %q, want %d", status, body, tc.want)
			}
			if tc.want == 502 && !strings.Contains(body, fmt.Sprintf("response header over %d bytes", limit)) {
				t.Errorf("body %q", body)
			}
		})
	}
}

// TestAuditFullRefuses: an Audit that returns ErrAuditFull refuses the
// connection as "audit log full"; any other error as a failed write.
func TestAuditFullRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"full", fmt.Errorf("share spent: %w", ErrAuditFull), "audit log full"},
		{"other", io.ErrShortWrite, "audit log write failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dial := newCountingDial()
			_, addr := startProxy(t, Config{
				PolicyName: "allow-list", Check: allowHosts("allowed.test"),
				Audit:    func(Record) error { return tc.err },
				Resolver: newResolver().set("allowed.test", "127.0.0.1"), AllowLocal: loopback, Dial: dial.dial,
			})
			c, _, status, body := keepAlive(t, addr, "http://allowed.test:1/")
			c.Close()
			want := `moat: network policy allow-list: "allowed.test" is not allowed: ` + tc.want + "\n"
			if status != 403 || body != want {
				t.Errorf("%d %q, want 403 %q", status, body, want)
			}
			if dial.n.Load() != 0 {
				t.Error("dialed")
			}
		})
	}
}

// TestRequestHeaderLimit: a request head of MaxHeaderBytes is served; one
// past MaxHeaderBytes plus the reader's 4 KiB buffer (which may hold the
// start of a body or of the next request) is a 431, and nothing is
// dialed for it.
func TestRequestHeaderLimit(t *testing.T) {
	const limit = 8 << 10
	o := startOrigin(t, false)
	for _, tc := range []struct {
		name string
		head int // total bytes of the request line and headers, final CRLF included
		want int
	}{
		{"well under", 200, 200},
		{"at the bound", limit, 200},
		{"just past the bound and the buffer", limit + 4096 + 1, 431},
		{"far past", 1 << 20, 431},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dial := newCountingDial()
			_, addr := startProxy(t, Config{
				Check: allowHosts("allowed.test"), MaxHeaderBytes: limit, Dial: dial.dial,
				Resolver: newResolver().set("allowed.test", "127.0.0.1"), AllowLocal: loopback,
			})
			start := fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nX-Big: ", o.port)
			pad := tc.head - len(start) - len("\r\n\r\n")
			c := rawProxy(t, addr)
			go c.Write([]byte(start + strings.Repeat("a", pad) + "\r\n\r\n"))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want != 200 && dial.n.Load() != 0 {
				t.Error("dialed for a refused head")
			}
		})
	}
}
