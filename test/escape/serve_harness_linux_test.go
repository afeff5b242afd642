//go:build linux

package escape_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/serve"
	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// apiServer is a real "moat serve" in this process: its socket in a
// private directory, loopback TCP, and a session.Manager of the policies
// the test names (each made by a func of the socket's path).
type apiServer struct {
	ls    *serve.Listeners
	token string
	m     *session.Manager
}

// servePolicy is moat's library defaults and layers under name, adjusted
// by edit.
func servePolicy(t *testing.T, name string, edit func(r *policy.Result), layers ...policy.Layer) session.Policy {
	t.Helper()
	r, err := policy.Merge(layers...)
	if err != nil {
		t.Fatal(err)
	}
	r.Config.Limits.MemoryBytes = 512 << 20
	if edit != nil {
		edit(&r)
	}
	return session.Policy{Name: name, Source: "test", Result: r}
}

func startAPI(t *testing.T, policies func(sock string) []session.Policy) *apiServer {
	t.Helper()
	dir, err := os.MkdirTemp("", "serve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	token, err := serve.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "serve.sock")
	ls, err := serve.Listen(serve.ListenOptions{Socket: sock, TCP: "127.0.0.1:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	m, err := session.NewManager(session.Options{Policies: policies(ls.Socket), WarmPool: -1, DenyTCPPorts: []uint16{ls.TCPPort}})
	if err != nil {
		ls.Close()
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Options{Manager: m, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer()
	go hs.Serve(ls.Unix())
	go hs.Serve(ls.TCP())
	t.Cleanup(func() { hs.Close(); m.Shutdown(); ls.Close() })
	return &apiServer{ls: ls, token: token, m: m}
}

// call is one request from this (host) process over the socket; it
// returns the status and body.
func (a *apiServer) call(t *testing.T, method, path, body string, token bool) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", a.ls.Socket)
	}}}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, "http://moat"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// session makes a session of policy over the API and returns its id.
func (a *apiServer) session(t *testing.T, policy string, token bool) string {
	t.Helper()
	st, body := a.call(t, "POST", "/v1/sessions", `{"policy":"`+policy+`"}`, token)
	if st != http.StatusCreated {
		t.Fatalf("create %s: %d %s", policy, st, body)
	}
	var info session.Info
	json.Unmarshal([]byte(body), &info)
	return info.ID
}

// runIn runs argv in session id over the API (with the token, which
// works whatever the sessions) and returns its output and exit code.
func (a *apiServer) runIn(t *testing.T, id string, argv ...string) result {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"argv": argv, "timeout_ms": 60000})
	st, body := a.call(t, "POST", "/v1/sessions/"+id+"/run", string(b), true)
	if st != http.StatusOK {
		t.Fatalf("run in %s: %d %s", id, st, body)
	}
	var r struct {
		ExitCode int                   `json:"exit_code"`
		Stdout   struct{ Text string } `json:"stdout"`
		Stderr   struct{ Text string } `json:"stderr"`
	}
	json.Unmarshal([]byte(body), &r)
	return result{Stdout: r.Stdout.Text, Stderr: r.Stderr.Text, Code: r.ExitCode}
}

// apiProbe is a Python program that asks GET /v1/policies of the server,
// on the Unix socket (argv[1] a path) or TCP (argv[1] host:port), with
// the token argv[2] when given, and prints "connected" once the connect
// succeeded, then "status N" or "closed".
const apiProbe = `
import socket, sys
target = sys.argv[1]
token = sys.argv[2] if len(sys.argv) > 2 else ""
try:
    if target.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(20)
        s.connect(target)
    else:
        host, port = target.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=20)
except OSError as e:
    print("connect refused:", e)
    sys.exit(0)
print("connected")
req = "GET /v1/policies HTTP/1.0\r\nHost: moat\r\n"
if token:
    req += "Authorization: Bearer " + token + "\r\n"
try:
    s.sendall((req + "\r\n").encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except OSError as e:
    print("closed:", e)
    sys.exit(0)
if not data:
    print("closed")
else:
    parts = data.split(b" ", 2)
    print("status", parts[1].decode(errors="replace") if len(parts) > 1 else "none: " + repr(data[:40]))
`

// apiServed says a probe was answered 200.
func apiServed(r result) bool { return strings.Contains(r.Stdout, "status 200") }
