package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bad moat serve input is a one-line usage error, exit 2, with nothing
// left behind.
func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a non-loopback address", []string{"--listen", "0.0.0.0:8600"}, "--listen"},
		{"no port", []string{"--listen", "127.0.0.1"}, "--listen"},
		{"a socket directly in /tmp", []string{"--socket", "/tmp/moat-serve-test.sock"}, "--socket"},
		{"no sessions", []string{"--max-sessions", "0"}, "--max-sessions"},
		{"a bad size", []string{"--max-total-memory", "lots"}, "--max-total-memory"},
		{"a missing policy file", []string{"--policy", "p=" + filepath.Join(dir, "none.toml")}, "--policy"},
		{"an argument", []string{"extra"}, "unexpected argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--socket", filepath.Join(dir, "s.sock")}, tc.args...)
			r := runMoat(t, nil, args...)
			if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
				t.Errorf("moat %q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", args, r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// moat serve --openapi prints the OpenAPI 3.1 document.
func TestServeOpenAPI(t *testing.T) {
	r := runMoat(t, nil, "serve", "--openapi")
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &doc) != nil || doc.OpenAPI != "3.1.0" || doc.Paths["/v1/sessions"] == nil {
		t.Errorf("moat serve --openapi: exit %d, %q...", r.code, trimTo(r.stdout, 200))
	}
}

func trimTo(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// moat serve prints one ready line, answers on its socket and TCP port
// (with the token), and SIGTERM removes the socket and the token file.
func TestServeReadyAndTerm(t *testing.T) {
	dir, stateHome := t.TempDir(), t.TempDir()
	cmd := exec.Command(moatBin, "serve", "--socket", filepath.Join(dir, "s.sock"), "--listen", "127.0.0.1:0", "--warm-pool", "0")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+stateHome)
	var errb strings.Builder
	cmd.Stderr = &errb
	defer func() {
		if t.Failed() {
			t.Logf("stderr: %s", errb.String())
		}
	}()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	var ready struct {
		Socket, TokenFile, Listen string
		PID                       int
	}
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no ready line: %v", err)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(line), &raw); err != nil || len(raw) != 4 {
		t.Errorf("ready line %q: %v", line, err)
	}
	json.Unmarshal([]byte(line), &ready)
	ready.TokenFile, _ = raw["token_file"].(string)
	if ready.PID != cmd.Process.Pid || ready.Socket != filepath.Join(dir, "s.sock") || filepath.Dir(ready.TokenFile) != filepath.Join(stateHome, "moat", "serve") || !strings.HasPrefix(ready.Listen, "127.0.0.1:") {
		t.Errorf("ready line %q", line)
	}
	token, _ := os.ReadFile(ready.TokenFile)
	uc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", ready.Socket)
	}}}
	if resp, err := uc.Get("http://moat/v1/policies"); err != nil || resp.StatusCode != 200 {
		t.Errorf("the socket: %v %v", resp, err)
	}
	req, _ := http.NewRequest("GET", "http://"+ready.Listen+"/v1/policies", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("TCP with the token: %v %v", resp, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(br) // until moat exits
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
	if len(rest) != 0 {
		t.Errorf("more than one line on stdout: %q", rest)
	}
	for _, p := range []string{ready.Socket, ready.TokenFile} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after SIGTERM: %v", p, err)
		}
	}
}

// startServe starts moat serve on sock and returns it with its ready
// line's socket, once it answers.
func startServe(t *testing.T, sock, stateHome string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(moatBin, "serve", "--socket", sock, "--warm-pool", "0")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+stateHome)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	t.Cleanup(func() {
		watchdog.Stop()
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.Contains(line, `"socket":`) {
		t.Fatalf("no ready line: %q %v", line, err)
	}
	return cmd
}

// kill -9 of moat serve leaves no process of its sessions; it leaves the
// socket and the token file, which the next moat serve sweeps.
func TestServeKill9(t *testing.T) {
	dir, stateHome := t.TempDir(), t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	cmd := startServe(t, sock, stateHome)
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	post := func(path, body string) map[string]any {
		t.Helper()
		resp, err := c.Post("http://moat"+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		json.NewDecoder(resp.Body).Decode(&v)
		if resp.StatusCode != 201 {
			t.Fatalf("POST %s: %d %v", path, resp.StatusCode, v)
		}
		return v
	}
	info := post("/v1/sessions", `{}`)
	id, _ := info["id"].(string)
	workdir, _ := info["workdir"].(string)
	marker := "4242." + strconv.Itoa(os.Getpid())
	post("/v1/sessions/"+id+"/processes", `{"argv":["sleep","`+marker+`"]}`)
	running := func() bool {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == "sleep\x00"+marker+"\x00" {
				return true
			}
		}
		return false
	}
	for start := time.Now(); !running() && time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
	}
	if !running() {
		t.Fatal("control: the background process is not seen running")
	}
	cmd.Process.Kill()
	cmd.Wait()
	for start := time.Now(); running() && time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
	}
	if running() {
		t.Error("a session's process outlived kill -9 of moat serve")
	}
	tokens, _ := filepath.Glob(filepath.Join(stateHome, "moat", "serve", "*.token"))
	if len(tokens) != 1 {
		t.Errorf("token files after kill -9: %q; want the one left for the next start to sweep", tokens)
	}
	for _, p := range append([]string{sock}, tokens...) {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v; kill -9 leaves it for the next start to sweep", p, err)
		}
	}
	if _, err := os.Lstat(workdir); err != nil {
		t.Fatalf("control: the killed session's working directory %s: %v", workdir, err)
	}
	old, _ := os.ReadFile(tokens[0])
	startServe(t, sock, stateHome) // sweeps the stale socket and token
	if now, _ := os.ReadFile(tokens[0]); len(now) == 0 || string(now) == string(old) {
		t.Errorf("the stale token file was not replaced: %q", now)
	}
	post("/v1/sessions", `{}`) // its sandbox's moat.New sweeps what the killed run left
	if _, err := os.Lstat(workdir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed session's working directory %s was not swept: %v", workdir, err)
	}
}

// A socket directory that a sandbox of an earlier run could write is
// refused: the sandbox could listen in the server's place. Control: a
// directory no sandbox was given passes the same check.
func TestServeSocketInPastPlace(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", state)
	dir := t.TempDir()
	store, err := hostStore()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RecordPlaces([]string{dir}); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--socket", filepath.Join(dir, "s.sock")}
	r := runMoat(t, nil, args...)
	if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "a sandbox of an earlier run could write") {
		t.Errorf("moat %q: exit %d, stderr %q; want exit 2 and one line saying why", args, r.code, r.stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
	if err := checkSocketPlace(filepath.Join(t.TempDir(), "s.sock")); err != nil {
		t.Errorf("control: a fresh directory: %v", err)
	}
}
