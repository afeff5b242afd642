package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Bad input to moat mcp exits 2 with one "moat:" line and leaves nothing
// behind: no token file, no token directory. The control, no flags and
// an empty standard input, serves and ends cleanly.
func TestMoatMCPBadInputs(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.toml")
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"listen on all addresses", []string{"mcp", "--listen", "0.0.0.0:0"}, 2},
		{"listen on a private address", []string{"mcp", "--listen", "192.168.1.1:8080"}, 2},
		{"listen without a port", []string{"mcp", "--listen", "127.0.0.1"}, 2},
		{"listen on a name", []string{"mcp", "--listen", "example.com:80"}, 2},
		{"missing policy", []string{"mcp", "--policy", missing}, 2},
		{"policy from stdin", []string{"mcp", "--policy", "-"}, 2},
		{"an argument", []string{"mcp", "extra"}, 2},
		{"control: stdio, empty input", []string{"mcp"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := filepath.Join(t.TempDir(), "run")
			if err := os.Mkdir(rt, 0o700); err != nil {
				t.Fatal(err)
			}
			state := t.TempDir()
			r := runMoat(t, []string{"XDG_RUNTIME_DIR=" + rt, "XDG_STATE_HOME=" + state}, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tc.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
			if tc.code == 2 {
				if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "moat: ") {
					t.Errorf("stderr %q: want one moat: line", r.stderr)
				}
			}
			if ents, _ := os.ReadDir(rt); len(ents) != 0 {
				t.Errorf("left in the runtime directory: %v", ents)
			}
			if _, err := os.Lstat(filepath.Join(state, "moat", "mcp")); err == nil && tc.code == 2 {
				t.Errorf("a token directory was made in the state root")
			}
		})
	}
}

// moat mcp --listen writes its token file, 0600, into the state root's mcp
// directory (0700), which every sandbox's view hides, and nothing into the
// runtime directory, which a policy may grant; at exit the file is gone.
func TestMoatMCPListenTokenInStateRoot(t *testing.T) {
	rt := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	cmd := exec.Command(moatBin, "mcp", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+rt, "XDG_STATE_HOME="+state)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v", err)
	}
	var ready struct {
		TokenFile string `json:"token_file"`
	}
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatalf("ready line %q: %v", line, err)
	}
	dir := filepath.Join(state, "moat", "mcp")
	if filepath.Dir(ready.TokenFile) != dir {
		t.Errorf("token file %q, want it in %s", ready.TokenFile, dir)
	}
	if fi, err := os.Stat(ready.TokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: %v, %v", fi, err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("token directory: %v, %v", fi, err)
	}
	if ents, _ := os.ReadDir(rt); len(ents) != 0 {
		t.Errorf("written into the runtime directory: %v", ents)
	}
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Errorf("moat mcp after SIGINT: %v", err)
	}
	if _, err := os.Lstat(ready.TokenFile); err == nil {
		t.Errorf("the token file is left after exit")
	}
}

// mcpStdio runs moat mcp with args over stdio, sends the initialize
// handshake and calls, and returns the responses to the calls, once each
// has come, and what moat wrote on stderr. Every stdout line must be
// JSON-RPC.
func mcpStdio(t *testing.T, env []string, args []string, calls ...string) ([]map[string]any, string) {
	t.Helper()
	rt := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, moatBin, append([]string{"mcp"}, args...)...)
	cmd.Env = append(append(os.Environ(), "XDG_RUNTIME_DIR="+rt, "XDG_STATE_HOME="+t.TempDir()), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for i, c := range calls {
		io.WriteString(stdin, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"tools/call","params":`+c+"}\n")
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var got []map[string]any
	for len(got) < len(calls)+1 && sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not JSON-RPC: %q", sc.Text())
		}
		got = append(got, m)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("moat mcp: %v; stderr %q", err, stderr.String())
	}
	if len(got) != len(calls)+1 {
		t.Fatalf("responses: %v; stderr %q", got, stderr.String())
	}
	return got[1:], stderr.String()
}

// Over stdio, standard output carries the protocol and nothing else: the
// session's log goes to standard error.
func TestMoatMCPStdioIsProtocolOnly(t *testing.T) {
	got, stderr := mcpStdio(t, nil, nil, `{"name":"run_command","arguments":{"argv":["sh","-c","echo to-stdout; echo to-stderr >&2"]}}`)
	js, _ := json.Marshal(got[0])
	if !strings.Contains(string(js), `to-stdout\\n`) || !strings.Contains(string(js), `to-stderr\\n`) {
		t.Errorf("tools/call: %s", js)
	}
	if !strings.Contains(stderr, "closed") {
		t.Errorf("the session's close is not logged on stderr: %q", stderr)
	}
}

// A policy whose [python] table says anything gets its venv, built at
// start as moat python builds it, and run_python runs the venv's
// interpreter. The control, no policy, runs the system's python3.
func TestMoatMCPPythonVenv(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "py.toml")
	if err := os.WriteFile(pol, []byte("[python]\nsystem-site-packages = true\ninterpreter = \""+systemPython+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := []string{"XDG_CACHE_HOME=" + t.TempDir()}
	const call = `{"name":"run_python","arguments":{"code":"import sys\nsys.prefix != sys.base_prefix"}}`
	for _, tc := range []struct {
		name   string
		args   []string
		inVenv bool
	}{
		{"venv", []string{"--policy", pol}, true},
		{"control: no policy", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, stderr := mcpStdio(t, cache, tc.args, call)
			js, _ := json.Marshal(got[0])
			if inVenv := strings.Contains(string(js), `"value\":\"True\"`); inVenv != tc.inVenv {
				t.Errorf("run_python: %s\nstderr: %s", js, stderr)
			}
		})
	}
}
