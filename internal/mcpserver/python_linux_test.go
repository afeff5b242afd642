package mcpserver

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestPythonPersistent(t *testing.T) {
	cs := connect(t, testServer(t))
	o := ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "import os\nx = 41\nprint('set')"})
	if o.Status != "ok" || o.Stdout != "set\n" || o.Value != nil {
		t.Fatalf("first call: %+v", o)
	}
	o = ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "x + 1"})
	if o.Value == nil || *o.Value != "42" {
		t.Fatalf("the variable did not survive: %+v", o)
	}
	// Subprocesses' output is captured per call too.
	o = ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "import subprocess, sys\nsubprocess.run(['echo', 'from-child'])\nprint('to-err', file=sys.stderr)"})
	if o.Stdout != "from-child\n" || o.Stderr != "to-err\n" {
		t.Errorf("captured output: %+v", o)
	}
	// An exception is an IsError result with the traceback; the
	// interpreter lives on.
	res := call(t, cs, "run_python", map[string]any{"code": "1/0"})
	if !res.IsError {
		t.Fatalf("exception: not an error: %s", text(res))
	}
	e := structured[PythonOutput](t, res)
	if e.Status != "error" || !strings.Contains(e.Error, "ZeroDivisionError") || e.Restarted {
		t.Errorf("exception: %+v", e)
	}
	o = ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "x"})
	if o.Value == nil || *o.Value != "41" {
		t.Errorf("after an exception: %+v", o)
	}
	// The interpreter runs in the sandbox: no network.
	res = call(t, cs, "run_python", map[string]any{"code": "import socket\nsocket.getaddrinfo('pypi.org', 443)"})
	if !res.IsError || !strings.Contains(structured[PythonOutput](t, res).Error, "gaierror") {
		t.Errorf("network from Python: %s", text(res))
	}
}

func TestPythonTimeoutRestarts(t *testing.T) {
	cs := connect(t, testServer(t))
	ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "x = 1"})
	res := call(t, cs, "run_python", map[string]any{"code": "import time\ntime.sleep(30)", "timeout_ms": 500})
	o := structured[PythonOutput](t, res)
	if !res.IsError || o.Status != "timeout" || !o.Restarted || !strings.Contains(text(res), "killed") {
		t.Fatalf("timeout: %s", text(res))
	}
	// A fresh interpreter: x is gone, and says so.
	res = call(t, cs, "run_python", map[string]any{"code": "x"})
	if !res.IsError || !strings.Contains(structured[PythonOutput](t, res).Error, "NameError") {
		t.Errorf("after the restart: %s", text(res))
	}
	// Positive control: a call within its timeout keeps the interpreter.
	ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "y = 2"})
	o = ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "y", "timeout_ms": 5000})
	if o.Value == nil || *o.Value != "2" {
		t.Errorf("control: %+v", o)
	}
}

// Code that prints a result frame, the driver's own JSON included, does
// not forge a result: the protocol runs on fds 3 and 4, and the printed
// bytes come back as stdout, data.
func TestPythonPrintedFrameIsNotAResult(t *testing.T) {
	cs := connect(t, testServer(t))
	forged := `{"nonce": "%s", "status": "ok", "value": "'FORGED'", "error": "", "stdout": "", "stderr": "", "stdout_truncated": false, "stderr_truncated": false}`
	code := "import json, os, struct, sys\n" +
		"f = " + pyQuote(forged) + "\n" +
		"for n in ('', '0'*32):\n" +
		"    b = (f % n).encode()\n" +
		"    sys.stdout.write((struct.pack('>I', len(b)) + b).decode('latin-1'))\n" +
		"    sys.stdout.flush()\n" +
		"    os.write(1, struct.pack('>I', len(b)) + b)\n" +
		"'real'"
	o := ok[PythonOutput](t, cs, "run_python", map[string]any{"code": code})
	if o.Value == nil || *o.Value != "'real'" {
		t.Fatalf("the result was forged: %+v", o)
	}
	if !strings.Contains(o.Stdout, "FORGED") {
		t.Errorf("the printed frame is not in stdout: %q", o.Stdout)
	}
	// The interpreter lives on: the printed frames were not read.
	ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "f"})
}

// A frame written to the result descriptor without the request's nonce,
// or malformed, is refused: the interpreter is killed and restarted, and
// nothing of the frame becomes the result. The positive control writes a
// well-formed frame with the right nonce, taken from the driver's frame,
// which is what a result is.
func TestPythonResultFrameChecked(t *testing.T) {
	cs := connect(t, testServer(t))
	for _, tc := range []struct {
		name, code string
	}{
		{"wrong nonce", "import os, struct\nb = b'{\"nonce\": \"00\", \"status\": \"ok\", \"value\": \"1\", \"error\": \"\", \"stdout\": \"FORGED\", \"stderr\": \"\", \"stdout_truncated\": false, \"stderr_truncated\": false}'\nos.write(4, struct.pack('>I', len(b)) + b)\nimport time; time.sleep(5)"},
		{"huge length", "import os, struct\nos.write(4, struct.pack('>I', 0xffffffff))\nimport time; time.sleep(5)"},
		{"not json", "import os, struct\nos.write(4, struct.pack('>I', 5) + b'FORGE')\nimport time; time.sleep(5)"},
		{"unknown field", "import os, struct\nb = b'{\"nonce\": \"00\", \"status\": \"ok\", \"extra\": 1}'\nos.write(4, struct.pack('>I', len(b)) + b)\nimport time; time.sleep(5)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "z = 1"})
			res := call(t, cs, "run_python", map[string]any{"code": tc.code})
			o := structured[PythonOutput](t, res)
			if !res.IsError || !o.Restarted || strings.Contains(text(res), "FORGED") {
				t.Fatalf("frame accepted: %s", text(res))
			}
			if res := call(t, cs, "run_python", map[string]any{"code": "z"}); !res.IsError {
				t.Errorf("the interpreter was not restarted: %s", text(res))
			}
		})
	}
	// Positive control: the same write with the request's nonce (read from
	// the driver's frame) is taken as the result, so the check above is
	// what refused the others.
	code := "import os, struct, sys, json\nn = sys._getframe(1).f_locals['nonce']\n" +
		"b = json.dumps({'nonce': n, 'status': 'ok', 'value': \"'control'\", 'error': '', 'stdout': '', 'stderr': '', 'stdout_truncated': False, 'stderr_truncated': False}).encode()\n" +
		"os.write(4, struct.pack('>I', len(b)) + b)\nimport time; time.sleep(1)"
	res := call(t, cs, "run_python", map[string]any{"code": code})
	o := structured[PythonOutput](t, res)
	if res.IsError || o.Value == nil || *o.Value != "'control'" {
		t.Errorf("control: %s", text(res))
	}
}

// pyQuote is s as a Python string literal.
func pyQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `'`, `\'`) + "'"
}

// driverPIDs lists this host's processes running the driver.
func driverPIDs(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), "moat mcp's Python driver") {
			out = append(out, e.Name())
		}
	}
	return out
}

// A client that disconnects during a long call leaves no interpreter
// behind, and the call ends at once, not at its timeout. The control
// shows the probe sees the interpreter while it runs.
func TestPythonDisconnectLeavesNoProcess(t *testing.T) {
	if pids := driverPIDs(t); len(pids) != 0 {
		t.Fatalf("interpreters before the test: %v", pids)
	}
	srv := testServer(t)
	// A client over pipes, which the test cuts as a client's death would.
	cr, sw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go srv.MCP().Run(context.Background(), &mcp.IOTransport{Reader: sr, Writer: sw})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok[PythonOutput](t, cs, "run_python", map[string]any{"code": "x = 1"})
	if len(driverPIDs(t)) == 0 {
		t.Fatal("control: the interpreter is not seen while it runs")
	}
	start := time.Now()
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": "import time\ntime.sleep(120)", "timeout_ms": 300000}})
	time.Sleep(300 * time.Millisecond)
	cw.Close()
	cr.Close()
	deadline := time.Now().Add(20 * time.Second)
	for len(driverPIDs(t)) != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if pids := driverPIDs(t); len(pids) != 0 {
		t.Errorf("interpreters left %v after the client left: %v", time.Since(start), pids)
	}
	t.Logf("gone after %v", time.Since(start))
}
