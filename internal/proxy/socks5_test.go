package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

// socks builds SOCKS5 byte strings for tests.
func socksBytes(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case int:
			b = append(b, byte(v))
		case string:
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		}
	}
	return b
}

// socksConnectTo is a CONNECT request for a domain name and port.
func socksConnectTo(host string, port int) []byte {
	return socksBytes(5, 1, 0, 3, len(host), host, port>>8, port&0xff)
}

func TestSOCKS5Handshake(t *testing.T) {
	noAuth := socksBytes(5, 1, 0)
	pwAuth := func(user, pass string) []byte {
		return socksBytes(5, 1, 2, 1, len(user), user, len(pass), pass)
	}
	tests := []struct {
		name       string
		credential string
		in         []byte
		reply      []byte // everything the server wrote
		host       string
		port       int
		literal    bool
		err        string // substring; "" = success
	}{
		{
			name:  "domain",
			in:    socksBytes(noAuth, socksConnectTo("Example.COM.", 443)),
			reply: socksBytes(5, 0),
			host:  "example.com", port: 443,
		},
		{
			name:  "ipv4",
			in:    socksBytes(noAuth, 5, 1, 0, 1, 192, 0, 2, 1, 0, 80),
			reply: socksBytes(5, 0),
			host:  "192.0.2.1", port: 80, literal: true,
		},
		{
			name:  "ipv6",
			in:    socksBytes(noAuth, 5, 1, 0, 4, netip.MustParseAddr("2001:db8::1").AsSlice(), 0x1f, 0x90),
			reply: socksBytes(5, 0),
			host:  "2001:db8::1", port: 8080, literal: true,
		},
		{
			name:  "domain holding an ip literal",
			in:    socksBytes(noAuth, socksConnectTo("127.0.0.1", 22)),
			reply: socksBytes(5, 0),
			host:  "127.0.0.1", port: 22, literal: true,
		},
		{
			name:  "several methods, no auth chosen",
			in:    socksBytes(5, 3, 0x80, 2, 0, socksConnectTo("a.test", 1)),
			reply: socksBytes(5, 0),
			host:  "a.test", port: 1,
		},
		{
			name:  "password only offered, none needed",
			in:    socksBytes(pwAuth("anyone", "anything"), socksConnectTo("a.test", 1)),
			reply: socksBytes(5, 2, 1, 0),
			host:  "a.test", port: 1,
		},
		{
			name:       "password accepted",
			credential: "s3cret",
			in:         socksBytes(5, 2, 0, 2, 1, 4, "moat", 6, "s3cret", socksConnectTo("a.test", 1)),
			reply:      socksBytes(5, 2, 1, 0),
			host:       "a.test", port: 1,
		},
		{
			name:       "wrong password",
			credential: "s3cret",
			in:         socksBytes(pwAuth("moat", "guess"), socksConnectTo("a.test", 1)),
			reply:      socksBytes(5, 2, 1, 1),
			err:        "authentication failed",
		},
		{
			name:       "wrong user",
			credential: "s3cret",
			in:         pwAuth("root", "s3cret"),
			reply:      socksBytes(5, 2, 1, 1),
			err:        "authentication failed",
		},
		{
			name:       "no auth offered, credential needed",
			credential: "s3cret",
			in:         noAuth,
			reply:      socksBytes(5, 0xff),
			err:        "no acceptable",
		},
		{
			name:  "no acceptable method",
			in:    socksBytes(5, 1, 0x80),
			reply: socksBytes(5, 0xff),
			err:   "no acceptable",
		},
		{
			name:  "zero methods",
			in:    socksBytes(5, 0),
			reply: socksBytes(5, 0xff),
			err:   "no acceptable",
		},
		{
			name:  "bad auth version",
			in:    socksBytes(5, 1, 2, 5, 1, "a", 1, "b"),
			reply: socksBytes(5, 2, 1, 1),
			err:   "version",
		},
		{
			name:  "bind",
			in:    socksBytes(noAuth, 5, 2, 0, 1, 1, 2, 3, 4, 0, 80),
			reply: socksBytes(5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0),
			err:   "only CONNECT",
		},
		{
			name:  "udp associate",
			in:    socksBytes(noAuth, 5, 3, 0, 1, 0, 0, 0, 0, 0, 0),
			reply: socksBytes(5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0),
			err:   "only CONNECT",
		},
		{
			name:  "bad address type",
			in:    socksBytes(noAuth, 5, 1, 0, 9),
			reply: socksBytes(5, 0, 5, 8, 0, 1, 0, 0, 0, 0, 0, 0),
			err:   "address type",
		},
		{
			name:  "bad request version",
			in:    socksBytes(noAuth, 4, 1, 0, 1),
			reply: socksBytes(5, 0, 5, 1, 0, 1, 0, 0, 0, 0, 0, 0),
			err:   "version",
		},
		{
			name:  "invalid domain",
			in:    socksBytes(noAuth, socksConnectTo("a b", 80)),
			reply: socksBytes(5, 0, 5, 4, 0, 1, 0, 0, 0, 0, 0, 0),
			err:   "invalid character",
		},
		{
			name:  "empty domain",
			in:    socksBytes(noAuth, socksConnectTo("", 80)),
			reply: socksBytes(5, 0, 5, 4, 0, 1, 0, 0, 0, 0, 0, 0),
			err:   "empty name",
		},
		{
			name:  "port zero",
			in:    socksBytes(noAuth, socksConnectTo("a.test", 0)),
			reply: socksBytes(5, 0, 5, 1, 0, 1, 0, 0, 0, 0, 0, 0),
			err:   "port 0",
		},
		{
			name:  "not socks5",
			in:    socksBytes(4, 1, 0, 80),
			reply: nil,
			err:   "not a SOCKS5 greeting",
		},
		{
			name:  "truncated greeting",
			in:    socksBytes(5, 3, 0),
			reply: nil,
			err:   "EOF",
		},
		{
			name:  "truncated request",
			in:    socksBytes(noAuth, 5, 1, 0, 1, 127),
			reply: socksBytes(5, 0),
			err:   "EOF",
		},
		{
			name:  "truncated domain",
			in:    socksBytes(noAuth, 5, 1, 0, 3, 10, 'a'),
			reply: socksBytes(5, 0),
			err:   "EOF",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			req, err := socksHandshake(bufio.NewReader(bytes.NewReader(tc.in)), &out, tc.credential)
			if !bytes.Equal(out.Bytes(), tc.reply) {
				t.Errorf("replies = % x, want % x", out.Bytes(), tc.reply)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q (request %+v)", err, tc.err, req)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.host != tc.host || req.port != tc.port || req.ip.IsValid() != tc.literal {
				t.Fatalf("request = %+v, want host %q port %d literal %v", req, tc.host, tc.port, tc.literal)
			}
		})
	}
}

func TestSOCKS5Reply(t *testing.T) {
	tests := []struct {
		bnd  netip.AddrPort
		want []byte
	}{
		{netip.AddrPort{}, socksBytes(5, 0, 0, 1, 0, 0, 0, 0, 0, 0)},
		{netip.MustParseAddrPort("127.0.0.1:258"), socksBytes(5, 0, 0, 1, 127, 0, 0, 1, 1, 2)},
		{netip.MustParseAddrPort("[::ffff:127.0.0.1]:1"), socksBytes(5, 0, 0, 1, 127, 0, 0, 1, 0, 1)},
		{netip.MustParseAddrPort("[::1]:80"), socksBytes(5, 0, 0, 4, netip.IPv6Loopback().AsSlice(), 0, 80)},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		socksReply(&out, socksSucceeded, tc.bnd)
		if !bytes.Equal(out.Bytes(), tc.want) {
			t.Errorf("socksReply(%v) = % x, want % x", tc.bnd, out.Bytes(), tc.want)
		}
	}
}

// FuzzSOCKS5Handshake feeds arbitrary bytes to the handshake over a
// net.Pipe, as a client would, with and without a credential. It must
// neither panic nor hang, and whatever it accepts must be a valid request.
func FuzzSOCKS5Handshake(f *testing.F) {
	f.Add([]byte{5, 1, 0, 5, 1, 0, 3, 6, 'a', '.', 't', 'e', 's', 't', 0, 80}, false)
	f.Add([]byte{5, 1, 2, 1, 4, 'm', 'o', 'a', 't', 2, 'p', 'w', 5, 1, 0, 1, 127, 0, 0, 1, 0, 80}, true)
	f.Add([]byte{5, 1, 0, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 187}, false)
	f.Add([]byte{5, 255}, false)
	f.Add([]byte{5, 1, 0, 5, 2, 0, 1}, false)
	f.Add([]byte{5, 1, 2, 1, 255}, true)
	f.Fuzz(func(t *testing.T, in []byte, withCredential bool) {
		credential := ""
		if withCredential {
			credential = "pw"
		}
		server, client := net.Pipe()
		server.SetDeadline(time.Now().Add(5 * time.Second))
		client.SetDeadline(time.Now().Add(5 * time.Second))
		// The client writes its bytes and hangs up, so the server sees
		// EOF where the input ends; meanwhile it reads every reply, so
		// the synchronous pipe never blocks the server.
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			client.Write(in)
			client.Close()
		}()
		read := make(chan struct{})
		go func() {
			defer close(read)
			io.Copy(io.Discard, client)
		}()
		req, err := socksHandshake(bufio.NewReader(server), server, credential)
		server.Close()
		<-wrote
		<-read
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("handshake hung")
		}
		if err != nil {
			return
		}
		if req.port < 1 || req.port > 65535 || req.host == "" {
			t.Fatalf("accepted request %+v", req)
		}
		if h, ip, err := normalizeHost(req.host); err != nil || h != req.host || ip != req.ip {
			t.Fatalf("accepted host %q does not normalize to itself", req.host)
		}
	})
}
