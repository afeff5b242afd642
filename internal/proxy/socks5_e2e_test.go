package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
)

// socksClient runs a SOCKS5 handshake on a new connection to the proxy: the
// greeting (with username/password when user is set), then request. It
// returns the connection and the reply code.
func socksClient(t *testing.T, addr, user, pass string, request []byte) (net.Conn, byte) {
	t.Helper()
	c := rawProxy(t, addr)
	if user != "" {
		c.Write(socksBytes(5, 1, 2, 1, len(user), user, len(pass), pass))
	} else {
		c.Write(socksBytes(5, 1, 0))
	}
	var sel [2]byte
	if _, err := io.ReadFull(c, sel[:]); err != nil {
		t.Fatalf("method selection: %v", err)
	}
	if sel[1] == 0xff {
		return c, 0xff
	}
	if sel[1] == 2 {
		var st [2]byte
		if _, err := io.ReadFull(c, st[:]); err != nil {
			t.Fatalf("auth status: %v", err)
		}
		if st[1] != 0 {
			return c, 0xfe // auth failed
		}
	}
	c.Write(request)
	var rep [4]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		t.Fatalf("reply: %v", err)
	}
	n := 4
	if rep[3] == 4 {
		n = 16
	}
	if _, err := io.ReadFull(c, make([]byte, n+2)); err != nil {
		t.Fatalf("reply address: %v", err)
	}
	return c, rep[1]
}

func socksConnectIP(a netip.Addr, port int) []byte {
	atyp := 1
	if a.Is6() {
		atyp = 4
	}
	return socksBytes(5, 1, 0, atyp, a.AsSlice(), port>>8, port&0xff)
}

func TestSOCKS5(t *testing.T) {
	o := startOrigin(t, false)
	l6, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatalf("IPv6 loopback: %v", err)
	}
	o6 := &http.Server{Handler: o.Config.Handler}
	go o6.Serve(l6)
	t.Cleanup(func() { o6.Close() })
	port6 := l6.Addr().(*net.TCPAddr).Port

	policy := func(_ context.Context, r Request) Decision {
		switch r.Host {
		case "allowed.test", "::1":
			return Decision{Allow: true}
		case "127.0.0.1":
			return Decision{Allow: true, ExplicitIP: true}
		case "10.1.2.3":
			return Decision{Allow: true}
		}
		return Decision{Reason: "host not in allow-list"}
	}
	tests := []struct {
		name    string
		request []byte
		rep     byte
		record  Record
	}{
		{"domain allowed", socksConnectTo("allowed.test", o.port), socksSucceeded,
			Record{Protocol: "socks5", Host: "allowed.test", Port: o.port, IP: "127.0.0.1", Allowed: true}},
		{"ipv4 named by policy", socksConnectIP(netip.MustParseAddr("127.0.0.1"), o.port), socksSucceeded,
			Record{Protocol: "socks5", Host: "127.0.0.1", Port: o.port, IP: "127.0.0.1", Allowed: true}},
		{"ipv6 in AllowLocal", socksConnectIP(netip.IPv6Loopback(), port6), socksSucceeded,
			Record{Protocol: "socks5", Host: "::1", Port: port6, IP: "::1", Allowed: true}},
		{"domain denied", socksConnectTo("denied.test", o.port), socksNotAllowed,
			Record{Protocol: "socks5", Host: "denied.test", Port: o.port, Reason: "host not in allow-list"}},
		{"local address refused", socksConnectIP(netip.MustParseAddr("10.1.2.3"), 80), socksNotAllowed,
			Record{Protocol: "socks5", Host: "10.1.2.3", Port: 80, IP: "10.1.2.3", Reason: "10.1.2.3 is a private address"}},
		{"name refused by address", socksConnectTo("local.test", 80), socksNotAllowed, Record{}},
		{"unresolvable", socksConnectTo("nowhere.test", 80), socksHostUnreachable, Record{}},
		{"connection refused", socksConnectTo("allowed.test", closedPort(t)), socksConnRefused, Record{}},
		{"bind", socksBytes(5, 2, 0, 1, 127, 0, 0, 1, 0, 80), socksCmdNotSupported, Record{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := &auditLog{}
			_, addr := startProxy(t, Config{
				Check: func(ctx context.Context, r Request) Decision {
					if r.Host == "local.test" || r.Host == "nowhere.test" {
						return Decision{Allow: true}
					}
					return policy(ctx, r)
				},
				Audit:      log.write,
				Resolver:   newResolver().set("allowed.test", "127.0.0.1").set("denied.test", "127.0.0.1").set("local.test", "192.168.1.1"),
				AllowLocal: append([]netip.Prefix{netip.MustParsePrefix("::1/128")}, loopback...),
			})
			c, rep := socksClient(t, addr, "", "", tc.request)
			if rep != tc.rep {
				t.Fatalf("reply %#x, want %#x", rep, tc.rep)
			}
			if rep == socksSucceeded {
				fmt.Fprintf(c, "GET /socks HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				if string(b) != "hello from /socks" {
					t.Fatalf("through the tunnel: %q", b)
				}
			}
			if tc.record.Host != "" {
				got := log.last(t)
				got.Time = tc.record.Time
				if got != tc.record {
					t.Errorf("record %+v\nwant   %+v", got, tc.record)
				}
			}
		})
	}
}

func TestSOCKS5Credential(t *testing.T) {
	o := startOrigin(t, false)
	_, addr := startProxy(t, Config{
		Check:      allowHosts("allowed.test"),
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
		Credential: "s3cret",
	})
	if _, rep := socksClient(t, addr, "", "", nil); rep != 0xff {
		t.Errorf("no auth offered: %#x, want no acceptable method", rep)
	}
	if _, rep := socksClient(t, addr, "moat", "guess", nil); rep != 0xfe {
		t.Errorf("wrong password: %#x, want auth failure", rep)
	}
	if _, rep := socksClient(t, addr, "moat", "s3cret", socksConnectTo("allowed.test", o.port)); rep != socksSucceeded {
		t.Errorf("right password: %#x", rep)
	}

	// Go's own SOCKS5 client (net/http's socks5:// proxy support).
	status, body, _ := get(t, clientVia(t, "socks5://moat:s3cret@"+addr, nil), fmt.Sprintf("http://allowed.test:%d/go", o.port))
	if status != 200 || body != "hello from /go" {
		t.Fatalf("%d %q", status, body)
	}
	if _, err := clientVia(t, "socks5://moat:nope@"+addr, nil).Get(fmt.Sprintf("http://allowed.test:%d/", o.port)); err == nil {
		t.Fatal("wrong password accepted")
	}
}

func TestSOCKS5HalfClose(t *testing.T) {
	port, got := halfCloseServer(t)
	_, addr := startProxy(t, Config{
		Check:      allowHosts("allowed.test"),
		Resolver:   newResolver().set("allowed.test", "127.0.0.1"),
		AllowLocal: loopback,
	})
	c, rep := socksClient(t, addr, "", "", socksConnectTo("allowed.test", port))
	if rep != socksSucceeded {
		t.Fatalf("reply %#x", rep)
	}
	if b, err := io.ReadAll(c); err != nil || string(b) != "hello" {
		t.Fatalf("read %q, %v", b, err)
	}
	io.WriteString(c, "bye")
	c.(*net.TCPConn).CloseWrite()
	if s := <-got; s != "bye" {
		t.Fatalf("server got %q", s)
	}
}
