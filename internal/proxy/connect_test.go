package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestCONNECTWithGoClient(t *testing.T) {
	o := startOrigin(t, true)
	log := &auditLog{}
	_, addr := startProxy(t, Config{
		PolicyName: "allow-list",
		Check:      allowHosts("allowed.test"),
		Audit:      log.write,
		Resolver:   newResolver().set("allowed.test", "127.0.0.1").set("denied.test", "127.0.0.1"),
		AllowLocal: loopback,
	})
	c := clientVia(t, "http://"+addr, o)
	status, body, _ := get(t, c, fmt.Sprintf("https://allowed.test:%d/tls", o.port))
	if status != 200 || body != "hello from /tls" {
		t.Fatalf("%d %q", status, body)
	}
	rec := log.last(t)
	if rec.Protocol != "connect" || rec.Host != "allowed.test" || rec.Port != o.port || !rec.Allowed || rec.IP != "127.0.0.1" {
		t.Errorf("record %+v", rec)
	}

	_, err := c.Get(fmt.Sprintf("https://denied.test:%d/", o.port))
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("denied CONNECT: %v", err)
	}
	if rec := log.last(t); rec.Host != "denied.test" || rec.Allowed {
		t.Errorf("record %+v", rec)
	}
}

// connectRaw sends a CONNECT for authority and returns the connection and
// the proxy's response.
func connectRaw(t *testing.T, addr, authority, extra string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c := rawProxy(t, addr)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", authority, authority, extra)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil {
		t.Fatal(err)
	}
	return c, br, resp
}

func TestCONNECTDenied(t *testing.T) {
	_, addr := startProxy(t, Config{
		PolicyName: "allow-list",
		Check:      allowHosts("allowed.test"),
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
	})
	tests := []struct {
		authority string
		status    int
		body      string
	}{
		{"evil.example:443", 403, `moat: network policy allow-list: "evil.example" is not allowed: host not in allow-list` + "\n"},
		{"allowed.test:443", 403, `moat: network policy allow-list: "allowed.test" is not allowed: resolves to 127.0.0.1, a loopback address` + "\n"},
		{"[::1]:443", 403, `moat: network policy allow-list: "::1" is not allowed: host not in allow-list` + "\n"},
	}
	for _, tc := range tests {
		_, _, resp := connectRaw(t, addr, tc.authority, "")
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || string(b) != tc.body {
			t.Errorf("CONNECT %s: %d %q, want %d %q", tc.authority, resp.StatusCode, b, tc.status, tc.body)
		}
	}
}

// halfCloseServer accepts one connection, sends "hello", half-closes, then
// reads everything the client sends until its EOF and reports it on got.
func halfCloseServer(t *testing.T) (int, chan string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- "accept: " + err.Error()
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "hello")
		c.(*net.TCPConn).CloseWrite()
		b, err := io.ReadAll(c)
		if err != nil {
			got <- "read: " + err.Error()
			return
		}
		// Still able to send after the client's EOF? The connection is
		// write-closed on this side already, so just report.
		got <- string(b)
	}()
	return l.Addr().(*net.TCPAddr).Port, got
}

func TestCONNECTHalfClose(t *testing.T) {
	port, got := halfCloseServer(t)
	_, addr := startProxy(t, Config{
		Check:      allowHosts("allowed.test"),
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
	})
	c, br, resp := connectRaw(t, addr, fmt.Sprintf("allowed.test:%d", port), "")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// The server's half-close reaches the client as EOF...
	b, err := io.ReadAll(br)
	if err != nil || string(b) != "hello" {
		t.Fatalf("read %q, %v; want hello then EOF", b, err)
	}
	// ...while the client can still send, and its own half-close reaches
	// the server as EOF.
	io.WriteString(c, "bye")
	c.(*net.TCPConn).CloseWrite()
	select {
	case s := <-got:
		if s != "bye" {
			t.Fatalf("server got %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the client's half-close never reached the server")
	}
}

func TestCONNECTPipelinedData(t *testing.T) {
	// A client may send its first bytes right behind the CONNECT request;
	// they must reach the origin after the tunnel opens.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c) // echo
	}()
	_, addr := startProxy(t, Config{Check: allowHosts("127.0.0.1"), AllowLocal: loopback})
	c := rawProxy(t, addr)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\nearly bytes", l.Addr())
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	buf := make([]byte, len("early bytes"))
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "early bytes" {
		t.Fatalf("echo %q, %v", buf, err)
	}
}
