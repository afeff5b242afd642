// Package mcpclient_test drives `moat mcp` with MCP clients nobody here
// wrote: the TypeScript SDK's client (@modelcontextprotocol/sdk) through a
// whole agent loop over stdio, and the server scenarios of
// @modelcontextprotocol/conformance over streamable HTTP, through a
// test-only proxy that adds the token. Both come from npm, pinned in
// package.json and package-lock.json; ./test.sh installs them (npm ci).
// Without them these tests fail: they never skip.
package mcpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needNode fails the test unless node and the pinned packages are here.
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is missing: ./test.sh run as root installs it (%v)", err)
	}
	for _, p := range []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/conformance"} {
		if _, err := os.Stat(filepath.Join("node_modules", p, "package.json")); err != nil {
			t.Fatalf("%s is not installed: run `npm ci` in test/mcpclient (./test.sh does) (%v)", p, err)
		}
	}
	return node
}

// moatBinary builds moat once per test binary.
func moatBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MOAT_TEST_BINARY"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "moat")
	cmd := exec.Command("go", "build", "-o", out, "../../cmd/moat")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// stateEnv keeps moat's state and the token directory in the test's own
// directories.
func stateEnv(t *testing.T) []string {
	t.Helper()
	rt := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_RUNTIME_DIR="+rt)
}

// The TypeScript SDK's client lists the tools and calls each one through a
// whole agent loop: a module and its test, a loopback server in the
// background, a signal, a refusal read back, the persistent interpreter.
func TestAgentLoopTypeScriptSDK(t *testing.T) {
	node := needNode(t)
	moat := moatBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "agent-loop.mjs", moat)
	cmd.Env = stateEnv(t)
	// The output is shown only on failure: its tally lines would read as
	// the closing line of a test run.
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the agent loop failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), " passed, 0 failed") {
		t.Fatal("the agent loop did not report its checks")
	}
}

// startHTTP starts moat mcp --listen on a loopback port and returns its URL
// and token.
func startHTTP(t *testing.T, moat string) (*url.URL, string) {
	t.Helper()
	cmd := exec.Command(moat, "mcp", "--listen", "127.0.0.1:0")
	cmd.Env = stateEnv(t)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v", err)
	}
	var ready struct {
		URL       string `json:"url"`
		TokenFile string `json:"token_file"`
	}
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatalf("ready line %q: %v", line, err)
	}
	fi, err := os.Stat(ready.TokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %q: %v, %v", ready.TokenFile, fi, err)
	}
	tok, err := os.ReadFile(ready.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(ready.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u, strings.TrimSpace(string(tok))
}

// tokenProxy is the test-only proxy that adds the token: moat mcp has no
// unauthenticated mode. It keeps the client's Host name (only the port
// changes), and its Origin, so that moat's own Host and Origin checks
// still face what the client sent.
func tokenProxy(t *testing.T, target *url.URL, token string) string {
	t.Helper()
	_, port, _ := net.SplitHostPort(target.Host)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: "http", Host: target.Host})
			host := r.In.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			r.Out.Host = net.JoinHostPort(strings.Trim(host, "[]"), port)
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1,
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// The server scenarios of @modelcontextprotocol/conformance, over
// streamable HTTP through the token proxy. conformance-baseline.yml lists
// the scenarios that do not apply to moat (the conformance suite's own
// test tools, prompts and resources, which moat does not offer), each with
// its reason; any other failure fails the test.
func TestConformanceServer(t *testing.T) {
	node := needNode(t)
	moat := moatBinary(t)
	target, token := startHTTP(t, moat)
	// Positive control of the token: without the proxy, moat refuses.
	resp, err := http.Post(target.String(), "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: status %d, want 401", resp.StatusCode)
	}
	base := tokenProxy(t, target, token)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "node_modules/@modelcontextprotocol/conformance/dist/index.js", "server",
		"--url", base+target.Path, "--expected-failures", "conformance-baseline.yml", "-o", t.TempDir())
	cmd.Env = stateEnv(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Baseline check passed") {
		t.Fatalf("conformance did not check its baseline:\n%s", out)
	}
}
