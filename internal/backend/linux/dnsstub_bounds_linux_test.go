package linux

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// frame prefixes msg with its length, as DNS over TCP does; pad bytes of
// zeros follow the message inside the frame.
func frame(msg []byte, pad int) []byte {
	out := binary.BigEndian.AppendUint16(nil, uint16(len(msg)+pad))
	out = append(out, msg...)
	return append(out, make([]byte, pad)...)
}

// answers reads framed answers from r until it ends, and counts those that
// parse as DNS responses; bad counts the others.
func answers(r io.Reader) (good, bad int) {
	br := bufio.NewReader(r)
	for {
		var hdr [2]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(hdr[:]))
		if _, err := io.ReadFull(br, msg); err != nil {
			bad++
			return
		}
		var p dnsmessage.Parser
		if h, err := p.Start(msg); err != nil || !h.Response {
			bad++
		} else {
			good++
		}
	}
}

// serveFrames runs serveDNSConn on one end of a pipe, writes in to the
// other, and returns the answers it got.
func serveFrames(t *testing.T, in []byte, pace *dnsPacer) (good, bad int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); serveDNSConn(server, nil, pace) }()
	go func() { client.Write(in); client.(*net.TCPConn).CloseWrite() }()
	client.SetDeadline(time.Now().Add(30 * time.Second))
	good, bad = answers(client)
	client.Close()
	<-done
	return good, bad
}

// TestDNSStubBounds: each bound of the stub, at and just past it.
func TestDNSStubBounds(t *testing.T) {
	q := dnsQuery(t, 7, 0, "pypi.org.", dnsmessage.TypeA)
	repeat := func(b []byte, n int) []byte {
		var out []byte
		for range n {
			out = append(out, b...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want int
	}{
		{"query of dnsMaxQuery bytes", frame(q, dnsMaxQuery-len(q)), 1},
		{"query one byte past", frame(q, dnsMaxQuery-len(q)+1), 0},
		{"length prefix 65535", frame(q, 65535-len(q)), 0},
		{"dnsStubQueries on one connection", repeat(frame(q, 0), dnsStubQueries), dnsStubQueries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good, bad := serveFrames(t, tc.in, newDNSPacer(1e6, 1e6))
			if good != tc.want || bad != 0 {
				t.Errorf("%d answers (%d bad), want %d", good, bad, tc.want)
			}
		})
	}
}

// TestDNSStubQueriesPerConn: a connection gets dnsStubQueries answers, one
// at a time, and is closed when it asks once more.
func TestDNSStubQueriesPerConn(t *testing.T) {
	q := frame(dnsQuery(t, 7, 0, "pypi.org.", dnsmessage.TypeA), 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			serveDNSConn(c, nil, newDNSPacer(1e6, 1e6))
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for i := range dnsStubQueries + 1 {
		c.Write(q)
		var hdr [2]byte
		_, err := io.ReadFull(br, hdr[:])
		if i < dnsStubQueries && err != nil {
			t.Fatalf("query %d: %v", i+1, err)
		}
		if i == dnsStubQueries && err == nil {
			t.Fatalf("query %d answered, bound %d", i+1, dnsStubQueries)
		}
		if err == nil {
			br.Discard(int(binary.BigEndian.Uint16(hdr[:])))
		}
	}
}

// TestDNSStubRate: past its burst the stub answers at most rate a second,
// across connections; within the burst it does not wait (the control).
func TestDNSStubRate(t *testing.T) {
	const rate, burst = 100, 20
	q := frame(dnsQuery(t, 7, 0, "pypi.org.", dnsmessage.TypeA), 0)
	for _, tc := range []struct {
		name      string
		n         int
		least     time.Duration
		most      time.Duration
		wantAnswd int
	}{
		{"within the burst", burst, 0, 200 * time.Millisecond, burst},
		{"30 past the burst", burst + 30, 290 * time.Millisecond, 5 * time.Second, burst + 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pace := newDNSPacer(rate, burst)
			start := time.Now()
			// Two connections share the pacer.
			var got atomic.Int32
			done := make(chan struct{})
			for _, n := range []int{tc.n / 2, tc.n - tc.n/2} {
				go func() {
					var in []byte
					for range n {
						in = append(in, q...)
					}
					g, _ := serveFrames(t, in, pace)
					got.Add(int32(g))
					done <- struct{}{}
				}()
			}
			<-done
			<-done
			d := time.Since(start)
			if int(got.Load()) != tc.wantAnswd || d < tc.least || d > tc.most {
				t.Errorf("%d answers in %v, want %d in [%v, %v]", got.Load(), d, tc.wantAnswd, tc.least, tc.most)
			}
		})
	}
	// A wait longer than a query's deadline ends the connection instead.
	p := newDNSPacer(1, 1)
	if !p.wait(time.Second) || p.wait(100*time.Millisecond) {
		t.Error("a pacer of one a second let two through at once")
	}
}

// TestDNSStubConns: dnsStubConns connections are served at once; one more
// is closed unanswered, at once.
func TestDNSStubConns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go serveDNSStub(ln, nil)
	q := frame(dnsQuery(t, 7, 0, "pypi.org.", dnsmessage.TypeA), 0)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	ask := func() (net.Conn, bool) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(3 * time.Second))
		c.Write(q)
		var hdr [2]byte
		_, err = io.ReadFull(c, hdr[:])
		return c, err == nil
	}
	for i := range dnsStubConns {
		c, ok := ask()
		held = append(held, c)
		if !ok {
			t.Fatalf("connection %d of %d not answered", i+1, dnsStubConns)
		}
	}
	c, ok := ask()
	c.Close()
	if ok {
		t.Fatalf("connection %d answered, bound %d", dnsStubConns+1, dnsStubConns)
	}
}

// FuzzServeDNSConn feeds arbitrary bytes to one stub connection: every
// answer is a framed DNS response, at most dnsStubQueries of them, and the
// connection ends.
func FuzzServeDNSConn(f *testing.F) {
	q := dnsQuery(f, 7, 0, "pypi.org.", dnsmessage.TypeA)
	f.Add(frame(q, 0))
	f.Add(append(frame(q, 0), frame(q, 3)...))
	f.Add([]byte{0xff, 0xff, 1, 2, 3})
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		good, bad := serveFrames(t, in, newDNSPacer(1e6, 1e6))
		if bad != 0 || good > dnsStubQueries {
			t.Fatalf("%d answers, %d not responses", good, bad)
		}
	})
}
