package moat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
	"github.com/moat-sandbox/moat/ipc"
)

// Typed IPC end to end: commands registered here run, as shims, inside
// real sandboxes, and their calls reach these handlers.

// echoArgs are heel's echo-args command's arguments.
type echoArgs struct {
	First  string `json:"first"`
	Second string `json:"second"`
	Flag   bool   `json:"flag"`
}

// ipcCommands is a router with heel's test commands and this suite's
// own, and the state they share.
type ipcCommands struct {
	router *ipc.Router
	mu     sync.Mutex
	count  int
	echoes int
	seen   map[int]bool
}

func newIPCCommands(t *testing.T) *ipcCommands {
	t.Helper()
	h := &ipcCommands{router: ipc.NewRouter(), seen: map[int]bool{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ipc.Register(h.router, "echo-args", func(_ context.Context, a echoArgs, c ipc.Call) (string, error) {
		h.mu.Lock()
		h.echoes++
		h.mu.Unlock()
		return fmt.Sprintf("first=%s second=%s flag=%v piped=%s", a.First, a.Second, a.Flag, c.Stdin), nil
	}, ipc.Positional("first", "second")))
	// counter keeps state across calls: every call gets the next number.
	must(ipc.Register(h.router, "counter", func(_ context.Context, a struct {
		By int `json:"by"`
	}, _ ipc.Call) (map[string]int, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if a.By == 0 {
			a.By = 1
		}
		h.count += a.By
		h.seen[h.count] = true
		return map[string]int{"count": h.count}, nil
	}))
	// wordcount reads piped input.
	must(ipc.Register(h.router, "wordcount", func(_ context.Context, a struct {
		Text string `json:"text"`
	}, c ipc.Call) (map[string]any, error) {
		return map[string]any{"words": len(strings.Fields(a.Text)), "bytes": len(c.Stdin), "dir": c.Dir, "sandbox": c.SandboxID}, nil
	}, ipc.StdinArg("text")))
	must(ipc.Register(h.router, "numbers", func(context.Context, struct{}, ipc.Call) ([]uint32, error) { return []uint32{1, 2, 3}, nil }))
	must(ipc.Register(h.router, "panics", func(context.Context, struct{}, ipc.Call) (string, error) { panic("handler bug") }))
	return h
}

// ipcSandbox creates a sandbox serving h at level iso.
func ipcSandbox(t *testing.T, h *ipcCommands, iso moat.Isolation) *moat.Sandbox {
	t.Helper()
	return moattest.NewSandbox(t, moat.Config{IPC: h.router, Isolation: iso})
}

func shIn(t *testing.T, sb *moat.Sandbox, script string, stdin string) (string, string, int) {
	t.Helper()
	c := sb.Command("/bin/sh", "-c", script)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if stdin != "" {
		c.Stdin = strings.NewReader(stdin)
	}
	err := c.Run()
	code := 0
	var ee *moat.ExitError
	if errors.As(err, &ee) {
		code = ee.StatusCode()
	} else if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return out.String(), errb.String(), code
}

// realUseScript is a Python program in the sandbox that calls the host's
// commands with subprocess and checks their typed results.
const realUseScript = `
import json, subprocess, os, sys
def call(*argv, stdin=None):
    r = subprocess.run(list(argv), input=stdin, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr
# State across calls: counter counts.
for want in (1, 2, 3):
    code, out, err = call("counter")
    assert code == 0, (code, err)
    assert json.loads(out) == {"count": want}, out
code, out, err = call("counter", "--by", "10")
assert json.loads(out)["count"] == 13, out
# Typed arguments: an int flag with a bad value is a usage error, exit 2.
code, out, err = call("counter", "--by", "ten")
assert code == 2 and err.startswith("counter: --by \"ten\": want an integer"), (code, err)
# Piped input reaches the handler.
code, out, err = call("wordcount", stdin="three little words")
res = json.loads(out)
assert code == 0 and res["words"] == 3 and res["bytes"] == 18, out
assert res["dir"] == os.getcwd(), (res, os.getcwd())
assert res["sandbox"] == sys.argv[1], res
# The handler's panic is a clear error, and the host survives it.
code, out, err = call("panics")
assert code == 1 and err == "panics: the command's handler panicked: handler bug\n", (code, err)
code, out, err = call("counter")
assert json.loads(out) == {"count": 14}, out
print("ok")
`

// TestIPCRealUse: a Python program in the sandbox calls two host commands
// through subprocess, one keeping state across calls and one reading
// piped input, and checks the typed results, at every level.
func TestIPCRealUse(t *testing.T) {
	for _, iso := range []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault, moat.IsolationPermissive} {
		t.Run(iso.String(), func(t *testing.T) {
			h := newIPCCommands(t)
			sb := ipcSandbox(t, h, iso)
			id := sandboxID(t, sb)
			out, err := sb.Command("python3", "-c", realUseScript, id).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "ok" {
				t.Fatalf("the Python program: %v\n%s", err, out)
			}
			if h.count != 14 {
				t.Fatalf("the host's counter is %d, want 14", h.count)
			}
		})
	}
}

// sandboxID asks the wordcount command which sandbox it was called from.
func sandboxID(t *testing.T, sb *moat.Sandbox) string {
	t.Helper()
	out, _, code := shIn(t, sb, "wordcount </dev/null", "")
	var res struct{ Sandbox string }
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Sandbox == "" {
		t.Fatalf("wordcount: %d %q %v", code, out, err)
	}
	return res.Sandbox
}

// TestIPCHeel is heel's IPC battery, P1-P9 (tests/ipc.rs).
func TestIPCHeel(t *testing.T) {
	h := newIPCCommands(t)
	sb := ipcSandbox(t, h, moat.IsolationDefault)
	t.Run("P1 positional arguments reach the host handler", func(t *testing.T) {
		before := h.echoes
		out, errs, code := shIn(t, sb, "echo-args alpha beta", "")
		if code != 0 || out != "first=alpha second=beta flag=false piped=" || h.echoes != before+1 {
			t.Fatalf("%d %q %q, calls %d", code, out, errs, h.echoes-before)
		}
	})
	t.Run("P2 named and boolean arguments reach the host handler", func(t *testing.T) {
		out, errs, code := shIn(t, sb, "echo-args --first one --second=two --flag", "")
		if code != 0 || out != "first=one second=two flag=true piped=" {
			t.Fatalf("%d %q %q", code, out, errs)
		}
	})
	t.Run("P3 piped input reaches the host handler", func(t *testing.T) {
		out, errs, code := shIn(t, sb, "printf 'from stdin' | echo-args alpha", "")
		if code != 0 || out != "first=alpha second= flag=false piped=from stdin" {
			t.Fatalf("%d %q %q", code, out, errs)
		}
	})
	t.Run("P4 handler state persists across calls", func(t *testing.T) {
		before := h.count
		out, errs, code := shIn(t, sb, "counter >/dev/null; counter >/dev/null; counter", "")
		var res map[string]int
		if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res["count"] != before+3 {
			t.Fatalf("%d %q %q: want count %d", code, out, errs, before+3)
		}
	})
	t.Run("P5 structured responses render as JSON", func(t *testing.T) {
		out, errs, code := shIn(t, sb, "numbers", "")
		if code != 0 || strings.Join(strings.Fields(out), "") != "[1,2,3]" {
			t.Fatalf("%d %q %q", code, out, errs)
		}
	})
	t.Run("P6 unknown commands fail with a message", func(t *testing.T) {
		_, errs, code := shIn(t, sb, "no-such-command", "")
		if code != 127 || !strings.Contains(errs, "not found") {
			t.Fatalf("not on PATH: %d %q", code, errs)
		}
		// Called by name through the client, it is the host's clear error.
		bin, _ := os.Executable()
		bin, _ = filepath.EvalSymlinks(bin)
		_, errs, code = shIn(t, sb, "_MOAT_IPC_COMMAND=no-such-command "+bin, "")
		if code != 1 || errs != "no-such-command: unknown command \"no-such-command\"\n" {
			t.Fatalf("through the client: %d %q", code, errs)
		}
	})
	t.Run("P7 the socket is not reachable by other users", func(t *testing.T) {
		for _, p := range []string{sb.IPCEndpoint(), filepath.Dir(sb.IPCEndpoint())} {
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm()&0o077 != 0 {
				t.Fatalf("%s: %v, %v: want no access for group and others", p, fi.Mode(), err)
			}
		}
	})
	t.Run("P8 IPC opens no network port", func(t *testing.T) {
		out, _, _ := shIn(t, sb, `printf %s "$MOAT_IPC_ENDPOINT"`, "")
		if out != sb.IPCEndpoint() || !filepath.IsAbs(out) || strings.Contains(out, "tcp") {
			t.Fatalf("MOAT_IPC_ENDPOINT = %q, want the socket path %q", out, sb.IPCEndpoint())
		}
		if fi, err := os.Lstat(out); err != nil || fi.Mode().Type() != os.ModeSocket {
			t.Fatalf("the endpoint is not a socket file: %v", err)
		}
	})
	t.Run("P9 the shim directory is the only executable place besides the system", func(t *testing.T) {
		out, errs, code := shIn(t, sb, `printf '#!/bin/sh\necho ran\n' > p.sh && chmod +x p.sh; ./p.sh; echo "p.sh=$?"; echo-args x >/dev/null; echo "shim=$?"`, "")
		if !strings.Contains(out, "p.sh=126") || !strings.Contains(out, "shim=0") || strings.Contains(out, "ran") {
			t.Fatalf("%d %q %q", code, out, errs)
		}
	})
}

// TestIPCConcurrentCallsInSandbox: 100 calls at once from inside the
// sandbox are all served, and the handler's state stays consistent:
// every count from 1 to 100 is handed out exactly once.
func TestIPCConcurrentCallsInSandbox(t *testing.T) {
	h := newIPCCommands(t)
	sb := ipcSandbox(t, h, moat.IsolationDefault)
	out, errs, code := shIn(t, sb, `for i in $(seq 100); do counter > out.$i & done; wait; cat out.* | tr -d ' \n'`, "")
	if code != 0 {
		t.Fatalf("%d %q %q", code, out, errs)
	}
	if h.count != 100 || len(h.seen) != 100 {
		t.Fatalf("count %d, %d distinct: want 100", h.count, len(h.seen))
	}
	for i := 1; i <= 100; i++ {
		if !strings.Contains(out, fmt.Sprintf(`{"count":%d}`, i)) {
			t.Fatalf("no caller got count %d: %s", i, out)
		}
	}
}

// TestIPCBadFramesFromSandbox: a malformed frame, an oversized frame and
// an unknown command sent by sandboxed code to the socket each get a
// clear error response, and the server keeps serving.
func TestIPCBadFramesFromSandbox(t *testing.T) {
	h := newIPCCommands(t)
	sb := ipcSandbox(t, h, moat.IsolationDefault)
	const probe = `
import socket, struct, json, os, sys
def exchange(raw):
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ["MOAT_IPC_ENDPOINT"])
    s.sendall(raw)
    s.shutdown(socket.SHUT_WR)
    buf = b""
    while True:
        b = s.recv(65536)
        if not b: break
        buf += b
    n = struct.unpack(">I", buf[:4])[0]
    return json.loads(buf[4:4+n])["error"]
def frame(b): return struct.pack(">I", len(b)) + b
print(exchange(frame(b'{"v":1,"cmd":')))
print(exchange(struct.pack(">I", 16*1024*1024 + 1) + b"x" * 100))
print(exchange(frame(b'{"v":1,"id":3,"cmd":"nope","argv":[]}')))
print(exchange(frame(b'{"v":1,"id":4,"cmd":"counter"')[:9]))
`
	c := sb.Command("python3", "-c", probe)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []string{
		`{'code': 'bad_request', 'message': 'malformed request: unexpected end of JSON input'}`,
		`{'code': 'too_large', 'message': 'frame of 16777217 bytes exceeds the 16777216-byte limit'}`,
		`{'code': 'unknown_command', 'message': 'unknown command "nope"'}`,
		`{'code': 'bad_request', 'message': 'truncated frame'}`,
	}
	if got := strings.Split(strings.TrimSpace(string(out)), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("responses:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	if out, errs, code := shIn(t, sb, "counter", ""); code != 0 || out != "{\n  \"count\": 1\n}\n" {
		t.Fatalf("after the bad frames: %d %q %q", code, out, errs)
	}
}

// TestIPCConfigurationErrors: an invalid or duplicate command name is an
// error at configuration time, and moat.New refuses a router that had one
// even when Register's error was ignored.
func TestIPCConfigurationErrors(t *testing.T) {
	noop := func(context.Context, struct{}, ipc.Call) (string, error) { return "", nil }
	cases := []struct {
		name string
		reg  func(r *ipc.Router) error
		want string
	}{
		{"invalid name", func(r *ipc.Router) error { return ipc.Register(r, "../x", noop) }, `ipc: command "../x": a command name is`},
		{"duplicate", func(r *ipc.Router) error {
			_ = ipc.Register(r, "dup", noop)
			return ipc.Register(r, "dup", noop)
		}, `ipc: command "dup": registered twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ipc.NewRouter()
			if err := c.reg(r); err == nil {
				t.Fatal("Register accepted it")
			}
			sb, err := moat.New(moat.Config{IPC: r})
			if err == nil {
				sb.Close()
				t.Fatal("moat.New accepted the router")
			}
			if !strings.HasPrefix(err.Error(), c.want) || !errors.Is(err, moat.ErrInvalidConfig) {
				t.Fatalf("moat.New: %v, want %q matching ErrInvalidConfig", err, c.want)
			}
			if err := (moat.Config{IPC: r}).Validate(); !errors.Is(err, moat.ErrInvalidConfig) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Config.Validate: %v, want %q", err, c.want)
			}
		})
	}
}

// TestIPCCloseLeavesNothing: Close stops the server and removes the
// socket, the shims and their directory, also where the socket had to
// move to /tmp because the temporary directory's path is too long.
func TestIPCCloseLeavesNothing(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 80))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tmp string
		iso moat.Isolation
	}{{"", moat.IsolationDefault}, {long, moat.IsolationDefault}, {long, moat.IsolationPermissive}}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s TMPDIR of %d bytes", c.iso, len(c.tmp)), func(t *testing.T) {
			if c.tmp != "" {
				t.Setenv("TMPDIR", c.tmp)
			}
			h := newIPCCommands(t)
			sb, err := moat.New(moat.Config{IPC: h.router, Isolation: c.iso})
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close() // a failed check must not leave it behind
			sock, shims := sb.IPCEndpoint(), sb.IPCShimDir()
			if len(sock) > ipc.MaxSocketPath || (c.tmp != "" && strings.HasPrefix(sock, c.tmp)) {
				t.Fatalf("with a long TMPDIR the socket is %q", sock)
			}
			if c.iso == moat.IsolationPermissive && c.tmp != "" && !strings.HasPrefix(sock, "/tmp/moat-") {
				t.Fatalf("a permissive sandbox's socket is %q, want it in /tmp, which the level keeps read-only", sock)
			}
			if out, err := sb.Command("counter").Output(); err != nil || !strings.Contains(string(out), `"count": 1`) {
				t.Fatalf("counter: %v %s", err, out)
			}
			if err := sb.Close(); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{sock, shims, filepath.Dir(sock)} {
				if _, err := os.Lstat(p); !os.IsNotExist(err) {
					t.Errorf("%s is left behind after Close: %v", p, err)
				}
			}
		})
	}
}

// TestIPCSocketRefusesOtherUsers: another user cannot connect to the
// socket (its directory is 0700, the socket 0600); the same connect as
// the owner works (the control).
func TestIPCSocketRefusesOtherUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED, NOT PASSED: TestIPCSocketRefusesOtherUsers needs root to connect as another user; run the root package tests as root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatal("setpriv is not on PATH; ./test.sh installs util-linux")
	}
	h := newIPCCommands(t)
	sb := ipcSandbox(t, h, moat.IsolationDefault)
	const connect = `import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("connected")
except OSError as e:
    print("refused", e.errno)
`
	owner, err := exec.Command("/usr/bin/python3", "-c", connect, sb.IPCEndpoint()).CombinedOutput()
	if err != nil || strings.TrimSpace(string(owner)) != "connected" {
		t.Fatalf("control: the owner cannot connect: %v %s", err, owner)
	}
	other, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", connect, sb.IPCEndpoint()).CombinedOutput()
	if err != nil || strings.TrimSpace(string(other)) != "refused 13" {
		t.Fatalf("another user (nobody): %v %s, want refused with EACCES", err, other)
	}
}

// TestIPCShimAncestorsReadOnly: whichever base the IPC directory got here
// (the runtime or the cache directory), no directory above the shims can
// be moved from inside, so no name can be redirected to a program the
// sandbox wrote; the same move works in the sandbox's /tmp (the control).
// test/escape's TestIPCShimDirectoryCannotBeMoved attacks it as an
// unprivileged user.
func TestIPCShimAncestorsReadOnly(t *testing.T) {
	for _, iso := range []moat.Isolation{moat.IsolationStrict, moat.IsolationDefault} {
		t.Run(iso.String(), func(t *testing.T) {
			h := newIPCCommands(t)
			sb := moattest.NewSandbox(t, moat.Config{IPC: h.router, Isolation: iso, Build: true})
			out, errs, _ := shIn(t, sb, fmt.Sprintf(`p=%q; while [ "$p" != / ]; do mv "$p" "$p.away" 2>/dev/null && echo "MOVED $p"; p=$(dirname "$p"); done; numbers | tr -d ' \n'`, sb.IPCShimDir()), "")
			if strings.Contains(out, "MOVED") || !strings.HasSuffix(out, "[1,2,3]") {
				t.Fatalf("%q %q", out, errs)
			}
			if out, _, _ := shIn(t, sb, `mkdir -p /tmp/a/bin && mv /tmp/a /tmp/a.away && echo MOVED`, ""); !strings.Contains(out, "MOVED") {
				t.Fatalf("control: a move in /tmp failed: %q", out)
			}
		})
	}
}
