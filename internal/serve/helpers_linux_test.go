package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// testServer is a real server over a real session.Manager, listening on
// a Unix socket in the test's directory (and loopback TCP when asked).
type testServer struct {
	t     testing.TB
	m     *session.Manager
	srv   *Server
	hs    *http.Server
	ls    *Listeners
	token string
	unix  *http.Client // no token
}

// testMemory is the memory limit of the tests' policies.
const testMemory = 256 << 20

// testPolicy is moat's library defaults under name, adjusted by edit.
func testPolicy(t testing.TB, name string, edit func(*policy.Result)) session.Policy {
	t.Helper()
	r, err := policy.Merge()
	if err != nil {
		t.Fatalf("policy.Merge: %v", err)
	}
	r.Config.Limits.MemoryBytes = testMemory
	if edit != nil {
		edit(&r)
	}
	return session.Policy{Name: name, Source: "test", Result: r}
}

type serverOpts struct {
	session session.Options
	tcp     bool
	tune    func(*http.Server)
	serve   Options
}

func newTestServer(t testing.TB, o serverOpts) *testServer {
	t.Helper()
	opt := o.session
	if len(opt.Policies) == 0 {
		opt.Policies = []session.Policy{testPolicy(t, "default", nil)}
	}
	if opt.WarmPool == 0 {
		opt.WarmPool = -1
	}
	token, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	lo := ListenOptions{Socket: filepath.Join(t.TempDir(), "serve.sock"), Token: token}
	if o.tcp {
		lo.TCP = "127.0.0.1:0"
	}
	ls, err := Listen(lo)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	if ls.TCPPort != 0 {
		opt.DenyTCPPorts = []uint16{ls.TCPPort}
	}
	m, err := session.NewManager(opt)
	if err != nil {
		ls.Close()
		t.Fatalf("NewManager: %v", err)
	}
	so := o.serve
	so.Manager, so.Token = m, token
	srv, err := New(so)
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer()
	if o.tune != nil {
		o.tune(hs)
	}
	go hs.Serve(ls.Unix())
	if ls.TCP() != nil {
		go hs.Serve(ls.TCP())
	}
	ts := &testServer{t: t, m: m, srv: srv, hs: hs, ls: ls, token: token, unix: unixClient(ls.Socket)}
	t.Cleanup(func() {
		hs.Close()
		m.Shutdown()
		ls.Close()
	})
	return ts
}

func unixClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 64,
	}}
}

// reply is a response read whole.
type reply struct {
	status int
	ctype  string
	body   []byte
}

func (r reply) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response %d %q: %v", r.status, r.body, err)
	}
}

// errCode is the error code of an error reply, "" for none.
func (r reply) errCode() string {
	var e errorBody
	if json.Unmarshal(r.body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

// do sends a request over the socket; body may be nil, a string (sent as
// it is) or a value (sent as JSON). hdr adds headers "Name: value".
func (ts *testServer) do(method, path string, body any, hdr ...string) reply {
	ts.t.Helper()
	return doWith(ts.t, ts.unix, "http://moat", method, path, body, hdr...)
}

func doWith(t testing.TB, c *http.Client, base, method, path string, body any, hdr ...string) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading: %v", method, path, err)
	}
	return reply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: data}
}

// create makes a session and returns its id.
func (ts *testServer) create(req session.CreateRequest, hdr ...string) string {
	ts.t.Helper()
	r := ts.do("POST", "/v1/sessions", req, hdr...)
	if r.status != http.StatusCreated {
		ts.t.Fatalf("create: %d %s", r.status, r.body)
	}
	var info session.Info
	r.json(ts.t, &info)
	return info.ID
}

func (ts *testServer) bearer() string { return "Authorization: Bearer " + ts.token }
