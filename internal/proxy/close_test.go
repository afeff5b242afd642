package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestCloseLeavesNothing opens every kind of connection the proxy can hold
// (idle keep-alive, tunnels both ways, silent clients, half-sent headers, a
// request stuck in the policy) and checks that Close ends them all and
// leaves no goroutine and no file descriptor behind.
func TestCloseLeavesNothing(t *testing.T) {
	o := startOrigin(t, false)
	baseG, baseFD := runtime.NumGoroutine(), countFDs()

	inCheck := make(chan struct{}, 1)
	s, err := New(Config{
		Check: func(ctx context.Context, r Request) Decision {
			if r.Host == "block.test" {
				inCheck <- struct{}{}
				<-ctx.Done() // released by Close
				return Decision{}
			}
			return Decision{Allow: true}
		},
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
		HostAddrs:  noHostAddrs,
	})
	if err != nil {
		t.Fatal(err)
	}
	var served []chan error
	var addrs []string
	for range 2 { // two listeners
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Serve(l) }()
		served = append(served, done)
		addrs = append(addrs, l.Addr().String())
	}

	var clients []net.Conn
	dial := func(addr string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		clients = append(clients, c)
		return c
	}
	// An idle keep-alive connection with a kept upstream connection.
	c := dial(addrs[0])
	fmt.Fprintf(c, "GET http://allowed.test:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", o.port)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	// An open CONNECT tunnel.
	c = dial(addrs[1])
	fmt.Fprintf(c, "CONNECT allowed.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", o.port)
	if resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "CONNECT"}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	// An open SOCKS5 tunnel, half-closed by the client.
	c = dial(addrs[0])
	c.Write(socksBytes(5, 1, 0, socksConnectTo("allowed.test", o.port)))
	if _, err := io.ReadFull(c, make([]byte, 12)); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	// A silent client, a half-sent request head, a half-sent handshake.
	dial(addrs[1])
	io.WriteString(dial(addrs[0]), "GET http://allowed.test/ HTTP/1.1\r\nHo")
	dial(addrs[1]).Write([]byte{5, 2, 0})
	// A request stuck in the policy.
	io.WriteString(dial(addrs[0]), "GET http://block.test/ HTTP/1.1\r\nHost: x\r\n\r\n")
	<-inCheck

	start := time.Now()
	s.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	for _, done := range served {
		select {
		case err := <-done:
			if !errors.Is(err, ErrServerClosed) {
				t.Errorf("Serve returned %v", err)
			}
		case <-time.After(time.Second):
			t.Error("Serve had not returned after Close")
		}
	}
	// Every client sees its connection end (EOF, or a reset where the
	// proxy closed with the client's bytes unread), long before the
	// clients' own deadline.
	for i, c := range clients {
		if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("client %d: %v, want the connection closed", i, err)
		}
		c.Close()
	}
	goroutinesSettle(t, baseG)
	if baseFD >= 0 && !settle(func() bool { return countFDs() <= baseFD }) {
		t.Errorf("open fds: %d, before: %d: %s", countFDs(), baseFD, listFDs())
	}
}

func TestCloseIdempotentAndServeAfterClose(t *testing.T) {
	s, err := New(Config{Check: allowHosts()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(l); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after Close: %v", err)
	}
	if _, err := net.Dial("tcp", l.Addr().String()); err == nil {
		t.Error("Serve after Close left the listener open")
	}
}

// TestIdleServerMemory measures what an idle Server with a listener costs:
// heap plus goroutine stacks, averaged over many servers.
func TestIdleServerMemory(t *testing.T) {
	const n = 50
	measure := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse
	}
	before := measure()
	servers := make([]*Server, n)
	done := make(chan error, n)
	for i := range servers {
		s, err := New(Config{Check: allowHosts()})
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- s.Serve(l) }()
		servers[i] = s
	}
	time.Sleep(50 * time.Millisecond)
	after := measure()
	per := (int64(after) - int64(before)) / n
	for _, s := range servers {
		s.Close()
		<-done
	}
	t.Logf("idle Server with a listener: %d bytes", per)
	if per > 256<<10 {
		t.Errorf("idle Server costs %d bytes, want well under 2 MiB (budget 256 KiB)", per)
	}
}
