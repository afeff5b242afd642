package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/moattest"
)

// The tests of moat exec and moat policy, translated from Heimdall's
// acceptance battery (H1–H18, L13, L18–L25, B1); each name carries its
// number. Every guarantee has a positive control: the same probe with
// the guarantee lifted, or the same setup showing what is refused exists.

// execCase is one invocation of the moat binary.
type execCase struct {
	dir   string   // the caller's current directory; "" for a fresh one
	stdin string   // what moat reads on standard input; "" for /dev/null
	env   []string // added to the test's environment
	args  []string
}

// runExec runs the moat binary as c says.
func (c execCase) run(t *testing.T) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, moatBin, c.args...)
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Dir = c.dir
	if cmd.Dir == "" {
		cmd.Dir = execTempDir(t)
	}
	if c.stdin != "" {
		cmd.Stdin = strings.NewReader(c.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("moat %q did not finish in a minute; stderr %q", c.args, r.stderr)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("moat %q: %v", c.args, err)
	}
	return r
}

// execTempDir is a fresh directory, its links resolved, that a sandbox
// of any user may read.
func execTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// writePolicy writes doc to a file in a fresh directory.
func writePolicy(t *testing.T, doc any) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(execTempDir(t), "policy.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkExec(t *testing.T, r result, want ...expect) {
	t.Helper()
	for _, e := range want {
		if p := e(r); p != "" {
			t.Errorf("%s (stdout %q, stderr %q)", p, r.stdout, r.stderr)
		}
	}
}

func execStderrHas(s string) expect {
	return func(r result) string {
		if !strings.Contains(r.stderr, s) {
			return fmt.Sprintf("stderr %q, want it to mention %q", r.stderr, s)
		}
		return ""
	}
}

// TestMoatPolicyCommands is H1–H4: schema, validate from a file and from
// standard input, and a document with an unknown field.
func TestMoatPolicyCommands(t *testing.T) {
	valid := `{"cwd":".","command":["true"]}`
	file := writePolicy(t, json.RawMessage(valid))
	bogus := writePolicy(t, json.RawMessage(`{"cwd":".","command":["true"],"bogus":1}`))
	tests := []struct {
		name string
		c    execCase
		want []expect
	}{
		{"H2 validate accepts a file", execCase{args: []string{"policy", "validate", file}}, []expect{exits(0), stdoutIs(""), stderrIs("")}},
		{"H3 validate accepts stdin", execCase{stdin: valid, args: []string{"policy", "validate", "-"}}, []expect{exits(0), stdoutIs(""), stderrIs("")}},
		{"H4 validate rejects an unknown field", execCase{args: []string{"policy", "validate", bogus}}, []expect{exits(2), stdoutIs(""), oneMoatLine("unknown policy field: bogus")}},
		{"H4 on stdin", execCase{stdin: `{"command":["true"],"filesystem":{"bogus":[]}}`, args: []string{"policy", "validate", "-"}}, []expect{exits(2), oneMoatLine("unknown policy field: filesystem.bogus")}},
		{"not an object", execCase{stdin: `[]`, args: []string{"policy", "validate", "-"}}, []expect{exits(2), oneMoatLine("policy JSON must be an object")}},
		{"enabled false", execCase{stdin: `{"command":["true"],"enabled":false}`, args: []string{"policy", "validate", "-"}}, []expect{exits(2), oneMoatLine("enabled=false")}},
		{"missing file", execCase{args: []string{"policy", "validate", "/nonexistent/p.json"}}, []expect{exits(2), oneMoatLine("/nonexistent/p.json", "no such file")}},
		{"no subcommand", execCase{args: []string{"policy"}}, []expect{exits(2), oneMoatLine("missing subcommand")}},
		{"exec refuses an invalid policy before running", execCase{stdin: `{"command":["true"],"bogus":1}`, args: []string{"exec", "--policy", "-"}}, []expect{exits(2), oneMoatLine("unknown policy field: bogus")}},
		{"explain", execCase{stdin: `{"command":["true"],"proc":"none","network":"none"}`, args: []string{"policy", "explain", "-"}}, []expect{exits(0), stderrIs("")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkExec(t, tt.c.run(t), tt.want...)
		})
	}

	t.Run("H1 schema", func(t *testing.T) {
		r := execCase{args: []string{"policy", "schema"}}.run(t)
		checkExec(t, r, exits(0), stderrIs(""))
		var s map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
			t.Fatalf("the schema is not JSON: %v", err)
		}
		props, _ := s["properties"].(map[string]any)
		if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" || s["additionalProperties"] != false || props["filesystem"] == nil {
			t.Fatalf("schema %v: want draft 2020-12, additionalProperties false, a filesystem property", s)
		}
	})
	t.Run("explain names the layers", func(t *testing.T) {
		r := execCase{stdin: `{"command":["true"],"proc":"none","network":"allow-list","allowDomains":["example.com"]}`, args: []string{"policy", "explain", "-"}}.run(t)
		checkExec(t, r, exits(0))
		for _, s := range []string{"network: allow-list example.com", "moat's proxy", "/proc: not mounted", "Landlock", "seccomp", "rlimits", "enforcement: strict"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("explain does not mention %q:\n%s", s, r.stdout)
			}
		}
	})
}

// TestMoatExecUsage: the mistakes of the command line are exit 2 and run
// nothing.
func TestMoatExecUsage(t *testing.T) {
	tests := []struct {
		name string
		c    execCase
		want []expect
	}{
		{"policy with a command", execCase{stdin: `{"command":["true"]}`, args: []string{"exec", "--policy", "-", "--", "true"}}, []expect{exits(2), oneMoatLine("--policy cannot be combined with direct exec arguments")}},
		{"policy with --cwd", execCase{stdin: `{"command":["true"]}`, args: []string{"exec", "--policy", "-", "--cwd", "/"}}, []expect{exits(2), oneMoatLine("--policy cannot be combined", "--cwd")}},
		{"allow and deny", execCase{args: []string{"exec", "--allow-env", "A", "--deny-env", "B", "--", "true"}}, []expect{exits(2), oneMoatLine("--allow-env and --deny-env")}},
		{"missing command", execCase{args: []string{"exec"}}, []expect{exits(2), oneMoatLine("missing command")}},
		{"bad stdio", execCase{args: []string{"exec", "--stdio", "tty", "--", "true"}}, []expect{exits(2), oneMoatLine("--stdio")}},
		{"invalid cwd", execCase{args: []string{"exec", "--cwd", "/nonexistent/dir", "--", "true"}}, []expect{exits(2), oneMoatLine("invalid cwd: /nonexistent/dir")}},
		{"cwd unset variable", execCase{args: []string{"exec", "--cwd", "$MOAT_NOT_SET_ANYWHERE", "--", "true"}}, []expect{exits(2), oneMoatLine("invalid cwd", "is not set")}},
		{"LD_ allowed", execCase{args: []string{"exec", "--allow-env", "LD_PRELOAD", "--", "true"}}, []expect{exits(2), oneMoatLine("--allow-env")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkExec(t, tt.c.run(t), append(tt.want, stdoutIs(""))...)
		})
	}
}

// TestMoatExec is H5–H17 and L19–L22: the command runs in the cwd, with
// the environment the policy allows, its streams and its status.
func TestMoatExec(t *testing.T) {
	requireSandbox(t)
	caller := execTempDir(t)
	other := execTempDir(t)
	env := []string{"MOAT_ALLOWED=visible", "MOAT_SECRET=hidden", "MOAT_VISIBLE=visible"}
	probe := `printf '%s:%s' "${MOAT_ALLOWED-unset}" "${MOAT_SECRET-unset}"`
	blockProbe := `printf '%s:%s' "${MOAT_VISIBLE-unset}" "${MOAT_SECRET-unset}"`
	denyPolicy := writePolicy(t, map[string]any{"command": []string{"sh", "-c", blockProbe}, "env": map[string]any{"deny": []string{"MOAT_SECRET"}}, "stdio": "piped"})
	tests := []struct {
		name string
		c    execCase
		want []expect
	}{
		{"H5 smoke", execCase{args: []string{"exec", "--cwd", ".", "--", "sh", "-c", "printf smoke"}}, []expect{exits(0), stdoutIs("smoke"), stderrIs("")}},
		{"H6 the cwd defaults to the caller's", execCase{dir: caller, args: []string{"exec", "--", "pwd"}}, []expect{exits(0), stdoutIs(caller + "\n")}},
		{"H7 the requested cwd", execCase{dir: caller, args: []string{"exec", "--cwd", other, "--", "pwd"}}, []expect{exits(0), stdoutIs(other + "\n")}},
		{"H7 the cwd expanded", execCase{dir: caller, env: []string{"MOAT_OTHER_DIR=" + other}, args: []string{"exec", "--cwd", "$MOAT_OTHER_DIR", "--", "pwd"}}, []expect{exits(0), stdoutIs(other + "\n")}},
		{"H8 allow-env", execCase{env: env, args: []string{"exec", "--allow-env", "MOAT_ALLOWED", "--", "sh", "-c", probe}}, []expect{exits(0), stdoutIs("visible:unset")}},
		{"H8 control: the allowlist names both", execCase{env: env, args: []string{"exec", "--allow-env", "MOAT_ALLOWED", "--allow-env", "MOAT_SECRET", "--", "sh", "-c", probe}}, []expect{exits(0), stdoutIs("visible:hidden")}},
		{"H8 the empty allowlist passes nothing", execCase{env: env, args: []string{"exec", "--", "sh", "-c", probe}}, []expect{exits(0), stdoutIs("unset:unset")}},
		{"H9 deny-env", execCase{env: env, args: []string{"exec", "--deny-env", "MOAT_SECRET", "--", "sh", "-c", blockProbe}}, []expect{exits(0), stdoutIs("visible:unset")}},
		{"H9 control: deny another", execCase{env: env, args: []string{"exec", "--deny-env", "MOAT_NONE", "--", "sh", "-c", blockProbe}}, []expect{exits(0), stdoutIs("visible:hidden")}},
		{"H10 a policy file", execCase{env: env, args: []string{"exec", "--policy", denyPolicy}}, []expect{exits(0), stdoutIs("visible:unset")}},
		{"H11 a policy on stdin: deny overrides allow", execCase{env: env, stdin: fmt.Sprintf(`{"command":["sh","-c",%q],"env":{"allow":["MOAT_ALLOWED","MOAT_SECRET"],"deny":["MOAT_SECRET"]}}`, probe), args: []string{"exec", "--policy", "-"}}, []expect{exits(0), stdoutIs("visible:unset")}},
		{"H12 the exit status", execCase{args: []string{"exec", "--", "sh", "-c", "exit 37"}}, []expect{exits(37), stdoutIs(""), stderrIs("")}},
		{"a signal's status", execCase{args: []string{"exec", "--", "sh", "-c", "kill -TERM $$"}}, []expect{exits(143)}},
		{"command not found", execCase{args: []string{"exec", "--", "definitely-not-a-command"}}, []expect{exits(127), oneMoatLine("definitely-not-a-command")}},
		{"H13 stderr is inherited", execCase{args: []string{"exec", "--", "sh", "-c", "printf error >&2"}}, []expect{exits(0), stdoutIs(""), stderrIs("error")}},
		{"H14 inherited stdin", execCase{stdin: "line\n", args: []string{"exec", "--", "sh", "-c", "read l && printf got-input"}}, []expect{exits(0), stdoutIs("got-input")}},
		{"H15 piped stdin is /dev/null", execCase{stdin: "line\n", args: []string{"exec", "--stdio", "piped", "--", "sh", "-c", "if read l; then printf got-input; else printf no-input; fi"}}, []expect{exits(0), stdoutIs("no-input")}},
		{"H16 piped output", execCase{args: []string{"exec", "--stdio", "piped", "--", "sh", "-c", "printf out; printf err >&2"}}, []expect{exits(0), stdoutIs("out"), stderrIs("err")}},
		// Heimdall's H17 asks only that moat does not fail. (The value
		// arrives as U+FFFD today: the helper's spec travels as JSON.)
		{"H17 a non-UTF-8 variable", execCase{env: []string{"MOAT_BYTES=\xff\xfe"}, args: []string{"exec", "--deny-env", "MOAT_NONE", "--", "sh", "-c", `test -n "$MOAT_BYTES" && printf set`}}, []expect{exits(0), stdoutIs("set")}},
		{"L19 network none still runs", execCase{stdin: `{"command":["sh","-c","printf net-none"],"network":"none"}`, args: []string{"exec", "--policy", "-"}}, []expect{exits(0), stdoutIs("net-none")}},
		{"L21 host identity files", execCase{args: []string{"exec", "--", "sh", "-c", "test -r /etc/passwd && test -r /etc/group && printf ok"}}, []expect{exits(0), stdoutIs("ok")}},
		{"L22 env, stderr and status together", execCase{env: env, args: []string{"exec", "--deny-env", "MOAT_SECRET", "--", "sh", "-c", blockProbe + "; printf err >&2; exit 37"}}, []expect{exits(37), stdoutIs("visible:unset"), stderrIs("err")}},
		{"the cwd is read-only", execCase{dir: caller, args: []string{"exec", "--", "sh", "-c", "if echo x > new.txt; then printf wrote; else printf refused; fi"}}, []expect{exits(0), stdoutIs("refused")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkExec(t, tt.c.run(t), tt.want...)
		})
	}
	if _, err := os.Stat(filepath.Join(caller, "new.txt")); err == nil {
		t.Error("the sandbox wrote new.txt in its read-only cwd")
	}
}

// TestMoatExecWritableGrantControl is the positive control of "the cwd is
// read-only": the same write to a directory the policy grants rw lands
// on the host.
func TestMoatExecWritableGrantControl(t *testing.T) {
	requireSandbox(t)
	dir := execTempDir(t)
	r := execCase{dir: dir, stdin: fmt.Sprintf(`{"command":["sh","-c","echo x > %s/new.txt && printf wrote"],"grants":{%q:"rw"}}`, dir, dir), args: []string{"exec", "--policy", "-"}}.run(t)
	checkExec(t, r, exits(0), stdoutIs("wrote"))
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "x\n" {
		t.Fatalf("new.txt = %q, %v", b, err)
	}
}

// TestMoatExecNetwork is L19 as an attack: with network none a loopback
// server of the host is unreachable; with network host (the control) the
// same probe reaches it.
func TestMoatExecNetwork(t *testing.T) {
	requireSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`if exec 3<>/dev/tcp/127.0.0.1/%d; then head -n1 <&3; else echo refused; fi`, port)
	for _, tt := range []struct{ network, want string }{{"none", "refused\n"}, {"host", "hello\n"}} {
		t.Run(tt.network, func(t *testing.T) {
			r := execCase{stdin: fmt.Sprintf(`{"command":["bash","-c",%q],"network":%q}`, script, tt.network), args: []string{"exec", "--policy", "-"}}.run(t)
			checkExec(t, r, exits(0), stdoutIs(tt.want))
		})
	}
}

// TestMoatExecProc is L20: proc none leaves /proc out; the default (the
// control) has it.
func TestMoatExecProc(t *testing.T) {
	requireSandbox(t)
	probe := "if test -e /proc/self; then printf proc; else printf no-proc; fi"
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"default", []string{"exec", "--", "sh", "-c", probe}, "proc"},
		{"--no-proc", []string{"exec", "--no-proc", "--", "sh", "-c", probe}, "no-proc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkExec(t, execCase{args: tt.args}.run(t), exits(0), stdoutIs(tt.want))
		})
	}
	t.Run("policy proc none", func(t *testing.T) {
		r := execCase{stdin: fmt.Sprintf(`{"command":["sh","-c",%q],"proc":"none"}`, probe), args: []string{"exec", "--policy", "-"}}.run(t)
		checkExec(t, r, exits(0), stdoutIs("no-proc"))
	})
}

// TestMoatExecVirtualFiles is L18: a virtual file reads as its contents,
// cannot be written, and never appears on the host. The control: the
// same write to another file of the private /tmp succeeds.
func TestMoatExecVirtualFiles(t *testing.T) {
	requireSandbox(t)
	target := "/tmp/moat-exec-virtual-" + strings.ReplaceAll(t.Name(), "/", "-")
	script := fmt.Sprintf(`cat %[1]s; if echo x > %[1]s; then printf :written; else printf :write-failed; fi; if echo x > %[1]s.other; then printf :other-written; fi`, target)
	r := execCase{stdin: fmt.Sprintf(`{"command":["sh","-c",%q],"filesystem":{"virtual":{%q:"virtual"}}}`, script, target), args: []string{"exec", "--policy", "-"}}.run(t)
	checkExec(t, r, exits(0), stdoutIs("virtual:write-failed:other-written"))
	for _, p := range []string{target, target + ".other"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists on the host", p)
		}
	}
}

// TestMoatExecForwardsSignals is H18 and L23: a signal to moat reaches the
// command, whose trap's status moat exits with.
func TestMoatExecForwardsSignals(t *testing.T) {
	requireSandbox(t)
	for _, tt := range []struct {
		name   string
		signal syscall.Signal
		want   int
	}{
		{"INT", syscall.SIGINT, 41}, {"TERM", syscall.SIGTERM, 42}, {"HUP", syscall.SIGHUP, 43}, {"QUIT", syscall.SIGQUIT, 44},
		{"USR1", syscall.SIGUSR1, 45}, {"USR2", syscall.SIGUSR2, 46},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := fmt.Sprintf(`trap "echo forwarded; exit %d" %s; echo ready; while :; do sleep 0.1; done`, tt.want, tt.name)
			code, rest, _ := signalExec(t, []string{"exec", "--", "sh", "-c", script}, tt.signal, 30*time.Second)
			if code != tt.want || rest != "forwarded\n" {
				t.Errorf("exit %d, output after ready %q; want %d and forwarded", code, rest, tt.want)
			}
		})
	}
}

// TestMoatExecSignalsEndCommand is L24: with no trap, SIGQUIT and SIGTERM
// end the command within about two seconds, and moat exits 128+N. The
// control: the loop is still running before the signal.
func TestMoatExecSignalsEndCommand(t *testing.T) {
	requireSandbox(t)
	for _, tt := range []struct {
		name   string
		signal syscall.Signal
	}{{"QUIT", syscall.SIGQUIT}, {"TERM", syscall.SIGTERM}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, took := signalExec(t, []string{"exec", "--", "sh", "-c", "echo ready; while :; do sleep 0.1; done"}, tt.signal, 5*time.Second)
			if code != 128+int(tt.signal) || took > 3*time.Second {
				t.Errorf("exit %d after %v; want %d within about 2s", code, took, 128+int(tt.signal))
			}
		})
	}
}

// signalExec starts moat with args, waits for the command's "ready"
// line, checks that it is still running a moment later (the control),
// sends sig to moat and returns its exit code, the output after ready,
// and how long it took to end after the signal.
func signalExec(t *testing.T, args []string, sig syscall.Signal, limit time.Duration) (int, string, time.Duration) {
	t.Helper()
	cmd := exec.Command(moatBin, args...)
	cmd.Dir = execTempDir(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(limit+30*time.Second, func() { _ = cmd.Process.Kill() })
	defer watchdog.Stop()
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("first line %q, %v; want ready (stderr %q)", line, err, stderr.String())
	}
	done := make(chan error, 1)
	var rest []byte
	go func() {
		rest, _ = io.ReadAll(out)
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		t.Fatalf("control: the command ended before the signal: %v (stderr %q)", err, stderr.String())
	case <-time.After(300 * time.Millisecond):
	}
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("moat did not end within %v of %v", limit, sig)
	}
	took := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(rest), took
}

// TestMoatExecChildDiesWithMoat is L25: after a SIGKILL of moat, the
// command, which would write a marker two seconds later, never does. The
// control: without the kill the marker is written.
func TestMoatExecChildDiesWithMoat(t *testing.T) {
	requireSandbox(t)
	for _, kill := range []bool{false, true} {
		t.Run(map[bool]string{false: "control", true: "killed"}[kill], func(t *testing.T) {
			t.Parallel()
			dir := execTempDir(t)
			marker := filepath.Join(dir, "marker")
			doc := fmt.Sprintf(`{"command":["sh","-c","echo ready; sleep 2; touch %s"],"grants":{%q:"rw"}}`, marker, dir)
			cmd := exec.Command(moatBin, "exec", "--policy", "-")
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader(doc)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("first line %q, %v (stderr %q)", line, err, stderr.String())
			}
			if kill {
				_ = cmd.Process.Kill()
			}
			_ = cmd.Wait()
			time.Sleep(3 * time.Second)
			_, err = os.Stat(marker)
			switch {
			case kill && err == nil:
				t.Fatal("the command outlived a SIGKILL of moat and wrote its marker")
			case !kill && err != nil:
				t.Fatalf("control: the command did not write its marker: %v (stderr %q)", err, stderr.String())
			}
		})
	}
}

// TestMoatExecAgentSockets is B1: with all three opt-ins, the agents'
// sockets (SSH, GnuPG from GPG_AGENT_INFO before its ':', age, gopass)
// exist inside and their variables are set; without (the control), none
// of them is there.
func TestMoatExecAgentSockets(t *testing.T) {
	requireSandbox(t)
	dir := execTempDir(t)
	names := []string{"ssh", "gpg", "age", "gopass"}
	paths := map[string]string{}
	for _, n := range names {
		p := filepath.Join(dir, n+".sock")
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		paths[n] = p
	}
	env := []string{
		"SSH_AUTH_SOCK=" + paths["ssh"],
		"GPG_AGENT_INFO=" + paths["gpg"] + ":1:1",
		"AGE_AUTH_SOCK=" + paths["age"],
		"GOPASS_AGE_AGENT_SOCK=" + paths["gopass"],
		"XDG_RUNTIME_DIR=" + dir, // no gnupg/ here
	}
	script := fmt.Sprintf(`r=; for p in %s %s %s %s; do if test -S "$p"; then r="$r:ok"; else r="$r:no"; fi; done; printf '%%s|%%s|%%s|%%s|%%s' "$r" "${SSH_AUTH_SOCK-unset}" "${GPG_AGENT_INFO-unset}" "${AGE_AUTH_SOCK-unset}" "${GOPASS_AGE_AGENT_SOCK-unset}"`,
		paths["ssh"], paths["gpg"], paths["age"], paths["gopass"])
	for _, tt := range []struct {
		name, opts, want string
	}{
		{"opted in", `,"sshAgent":true,"gpgAgent":true,"ageAgent":true`, ":ok:ok:ok:ok|" + paths["ssh"] + "|" + paths["gpg"] + ":1:1|" + paths["age"] + "|" + paths["gopass"]},
		{"control: not opted in", ``, ":no:no:no:no|unset|unset|unset|unset"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := execCase{env: env, stdin: fmt.Sprintf(`{"command":["sh","-c",%q]%s}`, script, tt.opts), args: []string{"exec", "--policy", "-"}}.run(t)
			checkExec(t, r, exits(0), stdoutIs(tt.want))
		})
	}
}

// missingLayerCase is the policy of L13: touch a marker in a granted
// directory.
func missingLayerCase(t *testing.T) (execCase, string) {
	dir := execTempDir(t)
	marker := filepath.Join(dir, "ran")
	doc := fmt.Sprintf(`{"command":["touch",%q],"grants":{%q:"rw"}}`, marker, dir)
	return execCase{dir: dir, stdin: doc, args: []string{"exec", "--policy", "-"}}, marker
}

// TestMoatExecMissingLayer is L13, for moat: on a host that refuses user
// namespaces, moat exec of a strict policy exits 2 and the command never
// runs. TestMoatExecMissingLayerControl is its positive control.
func TestMoatExecMissingLayer(t *testing.T) {
	requireSandbox(t)
	moattest.WithoutUserNamespaces(t, func(t *testing.T) {
		c, marker := missingLayerCase(t)
		checkExec(t, c.run(t), exits(2), oneMoatLine("host cannot enforce"))
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the command ran on a host that lacks a layer")
		}
	})
}

// TestMoatExecMissingLayerControl: with namespaces, the same policy runs
// the command.
func TestMoatExecMissingLayerControl(t *testing.T) {
	requireSandbox(t)
	c, marker := missingLayerCase(t)
	checkExec(t, c.run(t), exits(0), stdoutIs(""), stderrIs(""))
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the command did not run: %v", err)
	}
}

// TestMoatExecFilesystemPatterns is Heimdall's L3, L4 and L14 through moat
// exec: an unmatched file of the cwd stays read-only, a writable pattern
// lets the command create files, and a deny pattern with a negation hides
// .env but not .env.example. The control runs the same probe without the
// patterns: .env is then readable and work/ is not writable.
func TestMoatExecFilesystemPatterns(t *testing.T) {
	requireSandbox(t)
	script := `if echo new > data.txt; then printf data-written:; else printf data-refused:; fi; ` +
		`if echo edited > work/new.txt; then printf work-written:; else printf work-refused:; fi; ` +
		`cat .env 2>/dev/null || printf env-denied:; cat .env.example`
	for _, tt := range []struct {
		name, fs, want string
		workWritten    bool
	}{
		{"patterns", `,"filesystem":{"deny":[".env*","!.env.example"],"writable":["work"]}`, "data-refused:work-written:env-denied:example", true},
		{"control: no patterns", ``, "data-refused:work-refused:secret:example", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := execTempDir(t)
			for name, content := range map[string]string{"data.txt": "old", ".env": "secret:", ".env.example": "example", "work/.keep": ""} {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := execCase{dir: dir, stdin: fmt.Sprintf(`{"command":["sh","-c",%q]%s}`, script, tt.fs), args: []string{"exec", "--policy", "-"}}.run(t)
			checkExec(t, r, exits(0), stdoutIs(tt.want))
			if b, _ := os.ReadFile(filepath.Join(dir, "data.txt")); string(b) != "old" {
				t.Errorf("data.txt is %q on the host, want old", b)
			}
			b, err := os.ReadFile(filepath.Join(dir, "work", "new.txt"))
			if got := err == nil && string(b) == "edited\n"; got != tt.workWritten {
				t.Errorf("work/new.txt on the host: %q, %v; want written=%v", b, err, tt.workWritten)
			}
		})
	}
}

// TestMoatExecHelpExamples: every example of moat exec --help works as
// written, run by a shell from a directory holding what they name.
func TestMoatExecHelpExamples(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is not installed, so the make example cannot be checked: %v", err)
	}
	dir := execTempDir(t)
	for _, d := range []string{"project", "out"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "project", "Makefile"), []byte("test:\n\t@echo make test ran\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"hello\n", "make test ran\n", ""}
	examples := strings.Split(newExecCmd(stdio{}).Example, "\n")
	if len(examples) != len(want) {
		t.Fatalf("help has %d examples, the test knows %d", len(examples), len(want))
	}
	for i, ex := range examples {
		line := strings.TrimSpace(ex)
		t.Run(line, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", strings.Replace(line, "moat exec", moatBin+" exec", 1))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil || string(out) != want[i] {
				t.Fatalf("%s: %v: %q, want %q", line, err, out, want[i])
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out", "log")); err != nil || string(b) != "ok\n" {
		t.Errorf("out/log = %q, %v; want ok", b, err)
	}
}
