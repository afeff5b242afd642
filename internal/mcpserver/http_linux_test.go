package mcpserver

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP serves srv on a loopback port and returns its base URL and
// port.
func serveHTTP(t *testing.T, srv *Server, token string) (string, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	hs := &http.Server{Handler: srv.HTTPHandler(port, token)}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://127.0.0.1:" + strconv.Itoa(port), port
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

// Every request needs the token, a loopback Host with this port and no or
// a loopback Origin; the positive controls show the same request passes
// with each condition met.
func TestHTTPGuard(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	base, port := serveHTTP(t, testServer(t), token)
	p := strconv.Itoa(port)
	for _, tc := range []struct {
		name   string
		host   string
		origin string
		auth   string
		want   int
	}{
		{"control: token, no origin", "127.0.0.1:" + p, "", "Bearer " + token, 200},
		{"control: localhost host and origin", "localhost:" + p, "http://localhost:3000", "Bearer " + token, 200},
		{"control: ipv6 host", "[::1]:" + p, "http://127.0.0.1:" + p, "bearer " + token, 200},
		{"no token", "127.0.0.1:" + p, "", "", 401},
		{"wrong token", "127.0.0.1:" + p, "", "Bearer " + strings.Repeat("0", 64), 401},
		{"token prefix", "127.0.0.1:" + p, "", "Bearer " + token[:32], 401},
		{"basic auth", "127.0.0.1:" + p, "", "Basic " + token, 401},
		{"rebound host name", "evil.example:" + p, "", "Bearer " + token, 403},
		{"host without port", "127.0.0.1", "", "Bearer " + token, 403},
		{"host with another port", "127.0.0.1:1", "", "Bearer " + token, 403},
		{"foreign origin", "127.0.0.1:" + p, "http://evil.example", "Bearer " + token, 403},
		{"null origin", "127.0.0.1:" + p, "null", "Bearer " + token, 403},
		{"origin with a loopback-looking name", "127.0.0.1:" + p, "http://127.0.0.1.evil.example", "Bearer " + token, 403},
		{"file origin", "127.0.0.1:" + p, "file://", "Bearer " + token, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", base+HTTPPath, strings.NewReader(initBody))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// The SDK's streamable client drives a session over HTTP with the token,
// and cannot connect without it.
func TestHTTPClient(t *testing.T) {
	token, err := NewToken()
	if err != nil || len(token) != 64 {
		t.Fatalf("NewToken: %q, %v", token, err)
	}
	base, _ := serveHTTP(t, testServer(t), token)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "moat-test", Version: "0"}, nil)
	if cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + HTTPPath}, nil); err == nil {
		cs.Close()
		t.Fatal("connected without the token")
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + HTTPPath,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	defer cs.Close()
	o := ok[RunOutput](t, cs, "run_command", map[string]any{"argv": []string{"echo", "over http"}})
	if o.Stdout.Text != "over http\n" {
		t.Errorf("run: %+v", o)
	}
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.0.0.1:8080", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"192.168.1.1:8080", false},
		{"example.com:8080", false},
		{"127.0.0.1", false},
		{"127.0.0.1:99999", false},
	} {
		if err := CheckListen(tc.addr); (err == nil) != tc.ok {
			t.Errorf("CheckListen(%q) = %v, want ok %v", tc.addr, err, tc.ok)
		}
	}
}
