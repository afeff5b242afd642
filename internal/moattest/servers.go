package moattest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// HTTPServer is an HTTP (or HTTPS) server on the host's loopback that
// answers every request with one body and counts what reaches it: the
// target a sandbox's probe tries to reach, and whose counters show whether
// it did.
type HTTPServer struct {
	// Server is the running server; Close is called when the test ends.
	Server *httptest.Server
	// Port is the port it listens on.
	Port int
	// Hits counts requests served; Conns counts connections accepted.
	Hits, Conns atomic.Int32
}

// NewHTTPServer starts an HTTPServer on addr (host:port, port 0 for any)
// answering body, with TLS (a self-signed certificate) when tls is set.
func NewHTTPServer(t testing.TB, addr, body string, tls bool) *HTTPServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	s := &HTTPServer{Port: ln.Addr().(*net.TCPAddr).Port}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Hits.Add(1)
		io.WriteString(w, body)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.Conns.Add(1)
		}
	}
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	s.Server = srv
	return s
}

// ServeReply answers every connection to ln with reply and closes it. It
// returns the count of connections accepted; ln is closed, and its
// goroutine waited for, when the test ends.
func ServeReply(t testing.TB, ln net.Listener, reply string) *atomic.Int32 {
	var accepted atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = c.Write([]byte(reply))
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return &accepted
}
