package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// FuzzServeConn sends arbitrary bytes to the proxy as a client would: an
// HTTP request line and headers, a CONNECT, or a SOCKS5 handshake. Only
// allowed.test is allowed, and it resolves to 192.0.2.1: whatever the
// input, the proxy dials nothing else, answers within its bounds, and ends
// the connection.
func FuzzServeConn(f *testing.F) {
	for _, seed := range []string{
		"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"GET http://denied.test/ HTTP/1.1\r\nHost: x\r\n\r\nGET http://allowed.test:8080/ HTTP/1.1\r\n\r\n",
		"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
		"CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
		"POST http://allowed.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"GET http://127.0.0.1/ HTTP/1.0\r\n\r\n",
		"\x05\x01\x00\x05\x01\x00\x03\x0callowed.test\x01\xbb",
		"\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50",
		"\x05\x02\x00\x02\x01\x04moat\x01x\x05\x01\x00\x04" + strings.Repeat("\x00", 15) + "\x01\x00\x50",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var mu sync.Mutex
		var bad []string
		s, err := New(Config{
			Check:          allowHosts("allowed.test"),
			Resolver:       newResolver().set("allowed.test", "192.0.2.1"),
			HostAddrs:      noHostAddrs,
			HeaderTimeout:  2 * time.Second,
			MaxHeaderBytes: 4096,
			Audit:          func(Record) error { return nil },
			Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if !strings.HasPrefix(addr, "192.0.2.1:") {
					mu.Lock()
					bad = append(bad, addr)
					mu.Unlock()
				}
				return nil, errors.New("no dial while fuzzing")
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ln)
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		go func() { c.Write(in); c.(*net.TCPConn).CloseWrite() }()
		out, err := io.ReadAll(io.LimitReader(c, 1<<20))
		if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
			t.Fatalf("reading the answer: %v", err)
		}
		// Each request gets at most one short answer.
		if len(out) > 2048*(1+strings.Count(string(in), "\n")) {
			t.Fatalf("%d bytes of answer to %d bytes", len(out), len(in))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("dialed %q", bad)
		}
	})
}
