//go:build linux

package workloads_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/moat-sandbox/moat/ipc"
)

// agentTools is what an agent's host offers its sandboxed code: a
// key-value store kept across calls and a line counter over piped input.
func agentTools(t *testing.T) (*ipc.Router, map[string]string) {
	t.Helper()
	var mu sync.Mutex
	store := map[string]string{}
	r := ipc.NewRouter()
	type kv struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	for _, err := range []error{
		ipc.Register(r, "kv_set", func(_ context.Context, a kv, _ ipc.Call) (map[string]int, error) {
			if a.Key == "" {
				return nil, ipc.Errorf(ipc.CodeUsage, "kv_set needs a key")
			}
			mu.Lock()
			defer mu.Unlock()
			store[a.Key] = a.Value
			return map[string]int{"size": len(store)}, nil
		}, ipc.Positional("key", "value")),
		ipc.Register(r, "kv_get", func(_ context.Context, a kv, _ ipc.Call) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			v, ok := store[a.Key]
			if !ok {
				return "", ipc.Errorf("not_found", "no key %q", a.Key)
			}
			return v, nil
		}, ipc.Positional("key")),
		ipc.Register(r, "count_lines", func(_ context.Context, a struct {
			Text string `json:"text"`
		}, c ipc.Call) (map[string]any, error) {
			return map[string]any{"lines": strings.Count(a.Text, "\n"), "dir": c.Dir}, nil
		}, ipc.StdinArg("text")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return r, store
}

// agentScript is the sandboxed side: a project's Python program that uses
// the host's tools with subprocess, as generated code would.
const agentScript = `import json, os, subprocess, sys

def tool(*argv, stdin=None):
    r = subprocess.run(list(argv), input=stdin, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr

for i in range(5):
    code, out, err = tool("kv_set", "k%d" % i, "v%d" % i)
    assert code == 0 and json.loads(out) == {"size": i + 1}, (code, out, err)
code, out, err = tool("kv_get", "k3")
assert (code, out) == (0, "v3"), (code, out, err)
code, out, err = tool("kv_get", "missing")
assert code == 1 and err == 'kv_get: no key "missing"\n', (code, err)
code, out, err = tool("kv_set", "--value", "x")
assert code == 2 and err.startswith("kv_set: kv_set needs a key"), (code, err)
with open("data.txt") as f:
    code, out, err = tool("count_lines", stdin=f.read())
res = json.loads(out)
assert code == 0 and res == {"lines": 3, "dir": os.getcwd()}, (code, out, err)
code, out, err = tool("kv_get", "-h")
assert code == 0 and out.startswith("usage: kv_get"), (code, out, err)
print("agent ok")
`

// TestIPCAgentTools: a project's Python program calls the host's tools at
// the CLI's default level and in build mode, from the project directory,
// and the host sees what it stored.
func TestIPCAgentTools(t *testing.T) {
	need(t, "python3")
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"agent.py": agentScript, "data.txt": "a\nb\nc\n"})
			r, store := agentTools(t)
			cfg := config(dir, m.build)
			cfg.IPC = r
			sb := newSandbox(t, cfg)
			res := run(t, sb, dir, "python3", filepath.Join(dir, "agent.py"))
			mustPass(t, "agent.py", res)
			if !strings.Contains(res.Out, "agent ok") || len(store) != 5 || store["k4"] != "v4" {
				t.Fatalf("agent.py: %s; store %v", res, store)
			}
		})
	}
}
