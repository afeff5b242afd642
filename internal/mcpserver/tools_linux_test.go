package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// The tools moat mcp offers, exactly.
var wantTools = []string{
	"get_report", "list_files", "list_processes", "list_refusals", "read_file", "read_process_output",
	"run_command", "run_python", "session_info", "signal_process", "start_process", "stat_file", "stop_process", "write_file",
}

func TestToolsListed(t *testing.T) {
	cs := connect(t, testServer(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if !strings.Contains(tl.Description, "The sandbox's policy") || !strings.Contains(tl.Description, "network: none") ||
			!strings.Contains(tl.Description, "build mode off") {
			t.Errorf("%s: the description does not say what the policy allows: %q", tl.Name, tl.Description)
		}
		if tl.InputSchema == nil {
			t.Errorf("%s: no input schema", tl.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, wantTools) {
		t.Errorf("tools = %v, want %v", names, wantTools)
	}
}

// What MCP never offers: applying a workspace, restoring from the
// quarantine, any change to the policy; and no tool takes a policy.
func TestForbiddenToolsAbsent(t *testing.T) {
	cs := connect(t, testServer(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) == 0 {
		t.Fatal("no tools listed: the check below would pass vacuously")
	}
	for _, tl := range res.Tools {
		if slices.Contains(Forbidden, tl.Name) {
			t.Errorf("forbidden tool %q is offered", tl.Name)
		}
		for _, w := range []string{"policy", "quarantine", "workspace", "apply", "restore", "narrow", "widen", "allow", "grant"} {
			if strings.Contains(tl.Name, w) {
				t.Errorf("tool %q names %q", tl.Name, w)
			}
		}
		js := schemaJSON(t, tl.InputSchema)
		for _, w := range []string{`"policy"`, `"narrow"`, `"network"`, `"grants"`, `"limits"`, `"isolation"`, `"build"`, `"allow_domains"`} {
			if strings.Contains(js, w) {
				t.Errorf("tool %q takes an argument %s: %s", tl.Name, w, js)
			}
		}
	}
	// Calling one is an error of the protocol, not a tool result.
	for _, name := range Forbidden {
		if _, err := cs.CallTool(context.Background(), &mcpCallParams{Name: name}); err == nil {
			t.Errorf("calling %q did not fail", name)
		}
	}
}

func TestRunCommand(t *testing.T) {
	cs := connect(t, testServer(t))
	o := ok[RunOutput](t, cs, "run_command", map[string]any{"argv": []string{"sh", "-c", "echo hello; echo oops >&2; exit 3"}})
	if o.ExitCode != 3 || o.Stdout.Text != "hello\n" || o.Stderr.Text != "oops\n" || o.StdoutTruncated {
		t.Errorf("run: %+v", o)
	}
	o = ok[RunOutput](t, cs, "run_command", map[string]any{"argv": []string{"cat"}, "stdin": "from stdin"})
	if o.Stdout.Text != "from stdin" {
		t.Errorf("stdin: %+v", o)
	}
	// Output is bounded, and the result says so.
	res := call(t, cs, "run_command", map[string]any{"argv": []string{"sh", "-c", "head -c 5000 /dev/zero | tr '\\0' x"}, "max_output_bytes": 100})
	o = structured[RunOutput](t, res)
	if len(o.Stdout.Text) != 100 || !o.StdoutTruncated || !strings.Contains(text(res), "stdout was truncated") {
		t.Errorf("truncation: %d bytes, truncated %v, text %q", len(o.Stdout.Text), o.StdoutTruncated, text(res)[:80])
	}
	// A timeout kills it and says so.
	o = ok[RunOutput](t, cs, "run_command", map[string]any{"argv": []string{"sleep", "30"}, "timeout_ms": 300})
	if !o.TimedOut {
		t.Errorf("timeout: %+v", o)
	}
	// The working directory persists between calls.
	ok[RunOutput](t, cs, "run_command", map[string]any{"argv": []string{"sh", "-c", "echo kept > kept.txt"}})
	o = ok[RunOutput](t, cs, "run_command", map[string]any{"argv": []string{"cat", "kept.txt"}})
	if o.Stdout.Text != "kept\n" {
		t.Errorf("workdir not kept: %+v", o)
	}
}

func TestRunCommandErrors(t *testing.T) {
	cs := connect(t, testServer(t))
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"empty argv", map[string]any{"argv": []string{}}, session.CodeBadRequest},
		{"not found", map[string]any{"argv": []string{"no-such-command-moat"}}, session.CodeStart},
		{"negative timeout", map[string]any{"argv": []string{"true"}, "timeout_ms": -1}, session.CodeBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := errorOf(t, call(t, cs, "run_command", tc.args))
			if e.Code != tc.code || e.Message == "" {
				t.Errorf("error %+v, want code %s", e, tc.code)
			}
		})
	}
	// A schema violation is an IsError result too, from the SDK.
	if res := call(t, cs, "run_command", map[string]any{"argv": "not a list"}); !res.IsError {
		t.Errorf("argv as a string: not an error: %s", text(res))
	}
}

func TestProcesses(t *testing.T) {
	cs := connect(t, testServer(t))
	p := ok[session.Proc](t, cs, "start_process", map[string]any{"argv": []string{"sh", "-c", "trap 'echo got-hup' HUP; echo ready; while :; do sleep 0.1; done"}})
	if p.ID == "" || p.State != "running" {
		t.Fatalf("start: %+v", p)
	}
	var next int64
	var seen string
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(seen, "ready") && time.Now().Before(deadline) {
		o := ok[OutputOut](t, cs, "read_process_output", map[string]any{"id": p.ID, "stdout_from": next})
		seen += o.Stdout.Data.Text
		next = o.Stdout.Next
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(seen, "ready") {
		t.Fatalf("no output from the process: %q", seen)
	}
	l := ok[ProcList](t, cs, "list_processes", map[string]any{})
	if len(l.Processes) != 1 || l.Processes[0].ID != p.ID {
		t.Errorf("list: %+v", l)
	}
	ok[map[string]any](t, cs, "signal_process", map[string]any{"id": p.ID, "signal": "HUP"})
	for !strings.Contains(seen, "got-hup") && time.Now().Before(deadline) {
		o := ok[OutputOut](t, cs, "read_process_output", map[string]any{"id": p.ID, "stdout_from": next})
		seen += o.Stdout.Data.Text
		next = o.Stdout.Next
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(seen, "got-hup") {
		t.Errorf("the signal did not arrive: %q", seen)
	}
	st := ok[session.Proc](t, cs, "stop_process", map[string]any{"id": p.ID})
	if st.State != "exited" {
		t.Errorf("stop: %+v", st)
	}
	if e := errorOf(t, call(t, cs, "stop_process", map[string]any{"id": "p99"})); e.Code != session.CodeNotFound {
		t.Errorf("unknown process: %+v", e)
	}
	if e := errorOf(t, call(t, cs, "signal_process", map[string]any{"id": p.ID, "signal": "STOP"})); e.Code != session.CodeBadRequest {
		t.Errorf("bad signal: %+v", e)
	}
}

func TestFiles(t *testing.T) {
	cs := connect(t, testServer(t))
	w := ok[session.FileInfo](t, cs, "write_file", map[string]any{"path": "mod.py", "content": "X = 1\n"})
	if w.Type != "file" || w.Size != 6 {
		t.Errorf("write: %+v", w)
	}
	r := ok[FileOut](t, cs, "read_file", map[string]any{"path": "mod.py"})
	if r.Content.Text != "X = 1\n" || r.Truncated {
		t.Errorf("read: %+v", r)
	}
	r = ok[FileOut](t, cs, "read_file", map[string]any{"path": "mod.py", "max_bytes": 2})
	if r.Content.Text != "X " || !r.Truncated {
		t.Errorf("bounded read: %+v", r)
	}
	l := ok[FileList](t, cs, "list_files", map[string]any{"path": "."})
	if !slices.ContainsFunc(l.Entries, func(f session.FileInfo) bool { return f.Name == "mod.py" }) {
		t.Errorf("list: %+v", l)
	}
	s := ok[session.FileInfo](t, cs, "stat_file", map[string]any{"path": "mod.py"})
	if s.Mode != "0644" || s.Size != 6 {
		t.Errorf("stat: %+v", s)
	}
	// The command sees what the tool wrote, and the tool what it made.
	o := ok[RunOutput](t, cs, "run_command", map[string]any{"argv": []string{"python3", "-c", "import mod; print(mod.X)"}})
	if o.Stdout.Text != "1\n" {
		t.Errorf("the command does not see the file: %+v", o)
	}
	if e := errorOf(t, call(t, cs, "read_file", map[string]any{"path": "nope.txt"})); e.Code != session.CodeNotFound {
		t.Errorf("missing file: %+v", e)
	}
	if e := errorOf(t, call(t, cs, "write_file", map[string]any{"path": "/etc/moat-mcp-test", "content": "x"})); e.Code != session.CodePathRefused {
		t.Errorf("write outside: %+v", e)
	}
	if e := errorOf(t, call(t, cs, "write_file", map[string]any{"path": "m", "content": "x", "mode": "999"})); e.Code != session.CodeBadRequest {
		t.Errorf("bad mode: %+v", e)
	}
}

func TestReportAndSessionInfo(t *testing.T) {
	cs := connect(t, testServer(t))
	info := ok[SessionInfoOutput](t, cs, "session_info", map[string]any{})
	if info.Session.ID == "" || info.Session.Policy != "default" || info.Session.Allows.Network != "none" || len(info.Never) != 3 {
		t.Errorf("session_info: %+v", info)
	}
	ok[RunOutput](t, cs, "run_command", map[string]any{"argv": []string{"getent", "hosts", "pypi.org"}})
	rl := ok[RefusalList](t, cs, "list_refusals", map[string]any{})
	if len(rl.Refusals) == 0 || rl.Refusals[0].Kind != "dns" || rl.Refusals[0].Setting != "network.allow-domain" ||
		!strings.Contains(rl.Refusals[0].Advice, "network.allow-domain") {
		t.Fatalf("refusals: %+v", rl)
	}
	var doc struct {
		Version  int              `json:"version"`
		Refusals []map[string]any `json:"refusals"`
	}
	doc = ok[struct {
		Version  int              `json:"version"`
		Refusals []map[string]any `json:"refusals"`
	}](t, cs, "get_report", map[string]any{})
	if doc.Version != 1 || len(doc.Refusals) == 0 {
		t.Errorf("report: %+v", doc)
	}
}

// One connection, one session: a second connection sees nothing of the
// first one's files.
func TestOneSessionPerConnection(t *testing.T) {
	srv := testServer(t)
	a, b := connect(t, srv), connect(t, srv)
	ia := ok[SessionInfoOutput](t, a, "session_info", map[string]any{})
	ib := ok[SessionInfoOutput](t, b, "session_info", map[string]any{})
	if ia.Session.ID == ib.Session.ID || ia.Session.WorkDir == ib.Session.WorkDir {
		t.Errorf("two connections share a session: %+v %+v", ia.Session, ib.Session)
	}
	// Closing a connection closes its session.
	a.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(srv.opt.Manager.List()) == 1 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the closed connection's session lives on: %d sessions", len(srv.opt.Manager.List()))
}
