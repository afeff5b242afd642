package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestConcurrentConnections opens 200 connections at once, a third each
// HTTP, CONNECT and SOCKS5, all in flight together. Every one must succeed,
// every decision must be audited exactly once, and once the clients hang up
// no file descriptor or goroutine may remain.
func TestConcurrentConnections(t *testing.T) {
	const n = 200
	o := startOrigin(t, false)
	// Warm up the origin and the runtime's pools before the baseline.
	http.Get(o.URL)
	o.Client().Transport.(*http.Transport).CloseIdleConnections()
	baseG, baseFD := runtime.NumGoroutine(), countFDs()

	log := &auditLog{}
	s, err := New(Config{
		Check:      allowHosts("allowed.test"),
		Audit:      log.write,
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
		HostAddrs:  noHostAddrs,
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()

	// Connect all first, then send together.
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		conns[i] = c
	}
	start := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			<-start
			errs <- exchange(c, i%3, o.port, i)
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}

	recs := log.records()
	byProto := map[string]int{}
	for _, r := range recs {
		if !r.Allowed {
			t.Errorf("record %+v", r)
		}
		byProto[r.Protocol]++
	}
	if len(recs) != n {
		t.Errorf("%d audit records for %d connections: %v", len(recs), n, byProto)
	}
	// The proxy closes its side of every connection once the client has
	// hung up, without being closed itself.
	if baseFD >= 0 && !settle(func() bool { return countFDs() <= baseFD+1 }) { // +1: the listener
		t.Errorf("open fds: %d, before: %d (+1 listener)", countFDs(), baseFD)
	}
	s.Close()
	<-served
	goroutinesSettle(t, baseG)
	if baseFD >= 0 && !settle(func() bool { return countFDs() <= baseFD }) {
		t.Errorf("open fds after Close: %d, before: %d", countFDs(), baseFD)
	}
}

// exchange runs one request over c by protocol kind (0 HTTP, 1 CONNECT, 2
// SOCKS5) and checks the origin's answer.
func exchange(c net.Conn, kind, port, i int) error {
	br := bufio.NewReader(c)
	switch kind {
	case 0:
		fmt.Fprintf(c, "GET http://allowed.test:%d/%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port, i)
	case 1:
		fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", port)
		resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
		if err != nil || resp.StatusCode != 200 {
			return fmt.Errorf("%d: CONNECT: %v %v", i, resp, err)
		}
		fmt.Fprintf(c, "GET /%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", i)
	case 2:
		c.Write(socksBytes(5, 1, 0, socksConnectTo("allowed.test", port)))
		rep := make([]byte, 12) // method selection, then the reply
		if _, err := io.ReadFull(br, rep); err != nil || rep[1] != 0 || rep[3] != 0 {
			return fmt.Errorf("%d: SOCKS5 reply % x, %v", i, rep, err)
		}
		fmt.Fprintf(c, "GET /%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", i)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fmt.Errorf("%d: %v", i, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != fmt.Sprintf("hello from /%d", i) {
		return fmt.Errorf("%d: %q, %v", i, b, err)
	}
	return nil
}
