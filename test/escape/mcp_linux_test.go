package escape_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/mcpserver"
	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// mcpHTTPServer is moat mcp's HTTP face over pol, as `moat mcp --listen`
// builds it: the token in moat's state root (mcpserver.TokenDir), the
// guard in front, and a runtime directory of this test's
// ($XDG_RUNTIME_DIR).
type mcpHTTPServer struct {
	url, token, tokenFile, runtimeDir string
	port                              int
}

// startMCPHTTP serves pol (made by mk, given the port and the runtime
// directory) on a loopback port and returns the server and an MCP client
// connected with the token.
func startMCPHTTP(t *testing.T, mk func(port int, runtimeDir string) session.Policy) (mcpHTTPServer, *mcp.ClientSession) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	rt := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", rt)
	dir, err := mcpserver.TokenDir("")
	if err != nil {
		t.Fatal(err)
	}
	m := sessionManager(t, session.Options{Policies: []session.Policy{mk(port, rt)}})
	srv, err := mcpserver.New(mcpserver.Options{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.CloseAll)
	token, err := mcpserver.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	file, err := mcpserver.WriteToken(dir, port, token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(file) })
	hs := &http.Server{Handler: srv.HTTPHandler(port, token)}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	s := mcpHTTPServer{url: "http://127.0.0.1:" + strconv.Itoa(port) + mcpserver.HTTPPath, token: token, tokenFile: file, runtimeDir: rt, port: port}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "escape", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: bearerRT{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return s, cs
}

// bearerRT adds the token to every request.
type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpRun runs argv through the MCP tool run_command, with env added.
func mcpRun(t *testing.T, cs *mcp.ClientSession, env map[string]string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := map[string]any{"argv": argv}
	if env != nil {
		args["env"] = env
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: args})
	if err != nil {
		return result{Err: err, Code: -1}
	}
	js, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		return result{Err: errors.New("run_command failed"), Code: -1, Stderr: string(js)}
	}
	var o struct {
		ExitCode int                   `json:"exit_code"`
		Stdout   struct{ Text string } `json:"stdout"`
		Stderr   struct{ Text string } `json:"stderr"`
		Error    *mcpserver.ErrorInfo  `json:"error"`
	}
	if err := json.Unmarshal(js, &o); err != nil || o.Error != nil {
		return result{Err: err, Code: -1, Stderr: string(js)}
	}
	return result{Stdout: o.Stdout.Text, Stderr: o.Stderr.Text, Code: o.ExitCode}
}

// A sandboxed command cannot drive moat mcp's HTTP face, even under the
// widest network a policy gives it towards the server (an allow-list
// naming the server's port, loopback allowed to the proxy): without the
// token it is refused. The control passes the token into the sandbox,
// and the same request gets through, so the token is what refused it.
func TestMCPHTTPTokenFromSandbox(t *testing.T) {
	s, cs := startMCPHTTP(t, func(port int, _ string) session.Policy {
		return sessionPolicy(t, func(r *policy.Result) {
			r.Network = policy.Network{Mode: policy.NetworkAllowList, AllowDomains: []string{"127.0.0.1:" + strconv.Itoa(port)}, AllowLocal: []string{"127.0.0.1/32"}}
		})
	})
	const probe = `import os, urllib.request
req = urllib.request.Request(os.environ["URL"], data=b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}',
    headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
# Through moat's proxy, never around it (no_proxy names loopback).
proxy = os.environ.get("http_proxy") or os.environ.get("HTTP_PROXY")
for v in ("no_proxy", "NO_PROXY"):
    os.environ.pop(v, None)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
if os.environ.get("TOK"):
    req.add_header("Authorization", "Bearer " + os.environ["TOK"])
try:
    print(opener.open(req, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception as e:
    print("error", e)
`
	attack(t, "initialize", func(t *testing.T, lifted bool) result {
		env := map[string]string{"URL": s.url}
		if lifted {
			env["TOK"] = s.token
		}
		return mcpRun(t, cs, env, "python3", "-c", probe)
	}, func(r result) bool { return strings.TrimSpace(r.Stdout) != "200" })
}

// The token file is in moat's state root, which every sandbox's view
// hides and no grant reaches: even a sandbox at the permissive level,
// granted the runtime directory (whose moat directory held the token file
// once), cannot read it, with namespaces and without. The control writes
// a copy of the token straight into that granted runtime directory, and
// the same read in the same sandbox gets it: the place is what keeps it
// out.
func TestMCPTokenFileHidden(t *testing.T) {
	probe := func(t *testing.T) {
		perm := moat.IsolationPermissive
		s, cs := startMCPHTTP(t, func(_ int, rt string) session.Policy {
			return servePolicy(t, "default", func(r *policy.Result) {
				r.Grants = append(r.Grants, moat.PathRequest{Path: rt, Access: moat.READ})
			}, policy.Layer{Isolation: &perm})
		})
		if strings.HasPrefix(s.tokenFile, s.runtimeDir+"/") {
			t.Fatalf("the token file %q is in the runtime directory", s.tokenFile)
		}
		oldFile, err := mcpserver.WriteToken(s.runtimeDir, s.port, s.token)
		if err != nil {
			t.Fatal(err)
		}
		attack(t, "read", func(t *testing.T, lifted bool) result {
			f := s.tokenFile
			if lifted {
				f = oldFile
			}
			r := mcpRun(t, cs, nil, "cat", f)
			r.Stdout = strings.Replace(r.Stdout, s.token, "<the token>", 1)
			return r
		}, func(r result) bool { return !strings.Contains(r.Stdout, "<the token>") })
	}
	t.Run("namespaces", probe)
	t.Run("no namespaces", func(t *testing.T) { withoutNamespaces(t, probe) })
}
