package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// result is how one moat invocation ended.
type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// runMoat runs the moat binary with args, standard input from /dev/null
// and env added to the test's environment. It fails the test if moat takes
// a minute.
func runMoat(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runArgv(t, append([]string{moatBin}, args...), env)
}

// runArgv runs argv (moat, or a wrapper that runs it) as runMoat does.
func runArgv(t *testing.T, argv, env []string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%q did not finish in a minute; stderr %q", argv, r.stderr)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%q: %v", argv, err)
	}
	return r
}

// expect is one expectation on a result: it returns the problem, or "".
type expect func(r result) string

func exits(want int) expect {
	return func(r result) string {
		if r.code != want {
			return fmt.Sprintf("exit code %d, want %d", r.code, want)
		}
		return ""
	}
}

func stdoutIs(want string) expect {
	return func(r result) string {
		if r.stdout != want {
			return fmt.Sprintf("stdout %q, want %q", r.stdout, want)
		}
		return ""
	}
}

func stderrIs(want string) expect {
	return func(r result) string {
		if r.stderr != want {
			return fmt.Sprintf("stderr %q, want %q", r.stderr, want)
		}
		return ""
	}
}

// oneMoatLine wants stderr to be exactly one line starting "moat: " that
// mentions each of parts.
func oneMoatLine(parts ...string) expect {
	return func(r result) string {
		if !strings.HasPrefix(r.stderr, "moat: ") || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
			return fmt.Sprintf("stderr %q, want one line starting with \"moat: \"", r.stderr)
		}
		for _, p := range parts {
			if !strings.Contains(r.stderr, p) {
				return fmt.Sprintf("stderr %q, want it to mention %q", r.stderr, p)
			}
		}
		return ""
	}
}

func within(d time.Duration) expect {
	return func(r result) string {
		if r.elapsed > d {
			return fmt.Sprintf("took %v, want under %v", r.elapsed, d)
		}
		return ""
	}
}

func TestMoatVersion(t *testing.T) {
	r := runMoat(t, nil, "version")
	for _, e := range []expect{exits(0), stderrIs("")} {
		if p := e(r); p != "" {
			t.Error(p)
		}
	}
	if !strings.HasPrefix(r.stdout, "moat ") || !strings.Contains(r.stdout, "(go") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("stdout %q, want one line moat <version> (<go version>, <os>/<arch>)", r.stdout)
	}
}

func TestMoatRun(t *testing.T) {
	requireSandbox(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o777); err != nil {
		t.Fatal(err)
	}
	realWork, err := filepath.EvalSymlinks(work)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name string
		env  []string
		args []string
		want []expect
	}{
		{name: "success", args: []string{"run", "--", "true"}, want: []expect{exits(0), stdoutIs(""), stderrIs("")}},
		{name: "exit code passes through", args: []string{"run", "--", "sh", "-c", "exit 3"}, want: []expect{exits(3), stdoutIs(""), stderrIs("")}},
		{name: "killed by a signal", args: []string{"run", "--", "sh", "-c", "kill -TERM $$"}, want: []expect{exits(143), stdoutIs(""), stderrIs("")}},
		{name: "unknown flag", args: []string{"run", "--bogus"}, want: []expect{exits(2), stdoutIs(""), oneMoatLine("--bogus")}},
		{name: "no command", args: []string{"run"}, want: []expect{exits(2), stdoutIs(""), oneMoatLine("missing command")}},
		{name: "command not found", args: []string{"run", "--", "definitely-not-a-command"}, want: []expect{exits(127), stdoutIs(""), oneMoatLine("definitely-not-a-command")}},
		{name: "not executable", args: []string{"run", "--", "/etc/passwd"}, want: []expect{exits(126), stdoutIs(""), oneMoatLine("/etc/passwd")}},
		{name: "nice out of range", args: []string{"run", "--nice", "25", "--", "true"}, want: []expect{exits(2), stdoutIs(""), oneMoatLine("--nice", "25")}},
		{name: "bad size", args: []string{"run", "--memory", "12X", "--", "true"}, want: []expect{exits(2), stdoutIs(""), stderrIs("moat: --memory \"12X\": want a size like 512M or 2G\n")}},
		// A --workdir that does not exist is created and kept, as heel
		// does (checked below); one that cannot be is a usage error,
		// reported before anything is created.
		{name: "missing workdir", args: []string{"run", "--workdir", missing, "--", "true"}, want: []expect{exits(0), stdoutIs(""), stderrIs("")}},
		{name: "workdir under a file", args: []string{"run", "--workdir", "/etc/passwd/nonexistent", "--", "true"}, want: []expect{exits(2), stdoutIs(""), oneMoatLine("--workdir", "not a directory")}},
		{name: "flags end at the command", args: []string{"run", "sh", "-c", `echo "$@"`, "sh", "--memory", "12X", "-c", "--help"}, want: []expect{exits(0), stdoutIs("--memory 12X -c --help\n"), stderrIs("")}},
		{name: "workdir is where the command runs and writes", args: []string{"run", "--workdir", work, "--", "sh", "-c", "pwd; echo hi > out.txt"}, want: []expect{exits(0), stdoutIs(realWork + "\n"), stderrIs("")}},
		{name: "env sets", args: []string{"run", "--env", "GREETING=hi there", "--", "sh", "-c", `echo "$GREETING"`}, want: []expect{exits(0), stdoutIs("hi there\n")}},
		{name: "env passes through", env: []string{"MOAT_CLI_TEST=through"}, args: []string{"run", "--env", "MOAT_CLI_TEST", "--", "sh", "-c", `echo "$MOAT_CLI_TEST"`}, want: []expect{exits(0), stdoutIs("through\n")}},
		{name: "host env stays out", env: []string{"MOAT_CLI_TEST=through"}, args: []string{"run", "--", "sh", "-c", `echo "[$MOAT_CLI_TEST]"`}, want: []expect{exits(0), stdoutIs("[]\n")}},
		{name: "bad env name", args: []string{"run", "--env", "=x", "--", "true"}, want: []expect{exits(2), stdoutIs(""), oneMoatLine("--env")}},
		{name: "stdin is passed", args: []string{"run", "--", "sh", "-c", "cat; echo done"}, want: []expect{exits(0), stdoutIs("done\n")}},
		{name: "timeout", args: []string{"run", "--timeout", "1s", "--", "sleep", "30"}, want: []expect{exits(137), stdoutIs(""), oneMoatLine("timeout"), within(15 * time.Second)}},
		{name: "limits are accepted", args: []string{"run", "--memory", "1G", "--cpu-time", "60", "--file-size", "1M", "--processes", "64", "--open-files", "128", "--disk", "unlimited", "--nice", "5", "--io-priority", "utility", "--", "true"}, want: []expect{exits(0), stderrIs("")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runMoat(t, tt.env, tt.args...)
			for _, e := range tt.want {
				if p := e(r); p != "" {
					t.Error(p)
				}
			}
		})
	}
	t.Cleanup(func() {
		if fi, err := os.Stat(missing); err != nil || !fi.IsDir() {
			t.Errorf("a missing --workdir was not created and kept: %v", err)
		}
	})
}

func TestMoatRunWorkdirFile(t *testing.T) {
	requireSandbox(t)
	work := t.TempDir()
	if err := os.Chmod(work, 0o777); err != nil {
		t.Fatal(err)
	}
	r := runMoat(t, nil, "run", "--workdir", work, "--", "sh", "-c", "echo hi > out.txt")
	if r.code != 0 {
		t.Fatalf("exit code %d, stderr %q", r.code, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(work, "out.txt"))
	if err != nil || string(b) != "hi\n" {
		t.Errorf("out.txt = %q, %v; want \"hi\\n\"", b, err)
	}
}

func TestMoatRunPython(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on this host")
	}
	r := runMoat(t, nil, "run", "--", "python3", "-c", `print("hello from the sandbox")`)
	for _, e := range []expect{exits(0), stdoutIs("hello from the sandbox\n"), stderrIs("")} {
		if p := e(r); p != "" {
			t.Error(p)
		}
	}
	// Without "--" too: python3's own -c and flags after it are its own.
	r = runMoat(t, nil, "run", "python3", "-c", `import sys; print(sys.argv[1:])`, "--memory", "-c")
	for _, e := range []expect{exits(0), stdoutIs("['--memory', '-c']\n"), stderrIs("")} {
		if p := e(r); p != "" {
			t.Error(p)
		}
	}
}

func TestMoatRunForwardsSignals(t *testing.T) {
	requireSandbox(t)
	tests := []struct {
		name   string
		signal syscall.Signal
		trap   string
		want   int
	}{
		{name: "TERM", signal: syscall.SIGTERM, trap: "TERM", want: 7},
		{name: "INT", signal: syscall.SIGINT, trap: "INT", want: 8},
		{name: "HUP", signal: syscall.SIGHUP, trap: "HUP", want: 9},
		{name: "QUIT", signal: syscall.SIGQUIT, trap: "QUIT", want: 10},
		{name: "USR1", signal: syscall.SIGUSR1, trap: "USR1", want: 11},
		{name: "USR2", signal: syscall.SIGUSR2, trap: "USR2", want: 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := fmt.Sprintf(`trap "echo got-%s; exit %d" %s; echo ready; while :; do sleep 0.1; done`,
				strings.ToLower(tt.trap), tt.want, tt.trap)
			cmd := exec.Command(moatBin, "run", "--", "sh", "-c", script)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			watchdog := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
			defer watchdog.Stop()

			out := bufio.NewReader(stdout)
			if line, err := out.ReadString('\n'); line != "ready\n" {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("first line %q, %v; want ready (stderr %q)", line, err, stderr.String())
			}
			if err := cmd.Process.Signal(tt.signal); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(out)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.want {
				t.Errorf("moat ended with %v, want exit code %d", err, tt.want)
			}
			if want := "got-" + strings.ToLower(tt.trap) + "\n"; string(rest) != want {
				t.Errorf("stdout after ready %q, want %q", rest, want)
			}
			// The shell may report its sleep killed by the same signal
			// ("Terminated"); moat itself says nothing.
			if strings.Contains(stderr.String(), "moat") {
				t.Errorf("stderr %q, want nothing from moat", stderr.String())
			}
		})
	}
}

// ptyOutput collects what a pty master reads, for waiting on.
type ptyOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more chan struct{}
}

// collect reads r until it fails.
func (o *ptyOutput) collect(r io.Reader) {
	b := make([]byte, 4096)
	for {
		n, err := r.Read(b)
		o.mu.Lock()
		o.buf.Write(b[:n])
		o.mu.Unlock()
		select {
		case o.more <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// waitFor waits until the output contains one of ss, or d passes.
func (o *ptyOutput) waitFor(d time.Duration, ss ...string) bool {
	deadline := time.After(d)
	for {
		o.mu.Lock()
		text := o.buf.String()
		o.mu.Unlock()
		for _, s := range ss {
			if strings.Contains(text, s) {
				return true
			}
		}
		select {
		case <-o.more:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			return false
		}
	}
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

func TestMoatShell(t *testing.T) {
	requireSandbox(t)
	cmd := exec.Command(moatBin, "shell", "--shell", "/bin/sh")
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	watchdog := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer watchdog.Stop()

	out := &ptyOutput{more: make(chan struct{}, 1)}
	go out.collect(master)
	out.waitFor(10*time.Second, "$ ", "# ") // the prompt; type anyway if it differs
	type_ := func(line string) {
		t.Helper()
		if _, err := master.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	// The shell's terminal starts with moat's size and follows it.
	type_("stty size")
	if !out.waitFor(10*time.Second, "24 80") {
		t.Errorf("the shell's terminal is not 24x80: %q", out.String())
	}
	if err := pty.Setsize(master, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	resized := false
	for i := 0; i < 20 && !resized; i++ {
		type_("stty size")
		resized = out.waitFor(500*time.Millisecond, "30 100")
	}
	if !resized {
		t.Errorf("the shell's terminal did not follow moat's to 30x100: %q", out.String())
	}
	type_("echo $((6*7)); exit 5")
	if !out.waitFor(20*time.Second, "42") {
		t.Errorf("no 42 in the output %q", out.String())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Errorf("moat shell ended with %v, want exit code 5; output %q", err, out.String())
	}
}

func TestMoatShellWithoutTerminal(t *testing.T) {
	requireSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tests := []struct {
		name  string
		input string
		want  int
	}{
		{name: "exit status", input: "echo $((6*7)); exit 5\n", want: 5},
		{name: "end of input ends the shell", input: "echo $((6*7))\n", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.CommandContext(ctx, moatBin, "shell", "--shell", "/bin/sh")
			cmd.Stdin = strings.NewReader(tt.input)
			out, err := cmd.CombinedOutput()
			got := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				got = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || !strings.Contains(string(out), "42") {
				t.Errorf("exit code %d, output %q; want %d and 42", got, out, tt.want)
			}
		})
	}
}

func TestMoatDoctor(t *testing.T) {
	// moat doctor exits 0 exactly where the default, strict sandbox works.
	want := 0
	if !strictWorks().OK {
		want = 1
	}
	r := runMoat(t, nil, "doctor")
	if r.code != want {
		t.Errorf("moat doctor exit code %d, want %d; output:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	for _, s := range []string{"landlock", "seccomp", "user namespaces", "cgroup v2", "cgroup v1", "root", "what moat run will enforce on this host (isolation default, strict enforcement)", "isolation: default"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("moat doctor output lacks %q:\n%s", s, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr %q, want none", r.stderr)
	}

	r = runMoat(t, nil, "doctor", "--json")
	if r.code != want {
		t.Errorf("moat doctor --json exit code %d, want %d", r.code, want)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("moat doctor --json: %v\n%s", err, r.stdout)
	}
	for _, key := range []string{"os", "arch", "kernel", "machine", "root", "landlock", "seccomp", "user_namespaces", "cgroup", "isolation", "enforcement", "missing", "run", "strict"} {
		if _, ok := got[key]; !ok {
			t.Errorf("moat doctor --json lacks key %q", key)
		}
	}
	var typed doctorReport
	if err := json.Unmarshal([]byte(r.stdout), &typed); err != nil {
		t.Fatal(err)
	}
	if typed.Strict.OK != (want == 0) {
		t.Errorf("strict.ok = %v with exit code %d", typed.Strict.OK, r.code)
	}
	if typed.Landlock.Available && typed.Landlock.ABI < 1 {
		t.Errorf("landlock available with ABI %d", typed.Landlock.ABI)
	}
	if len(typed.Enforcement.Layers) == 0 && typed.Enforcement.Error == "" {
		t.Error("enforcement lists no layers and no error")
	}
}

// procState returns the one-letter state of pid ("S", "T", "Z"...).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// childrenOf lists pid's children.
func childrenOf(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// Ctrl-Z stops the command and moat with it; SIGCONT resumes both, so a
// shell's job control works on `moat run`.
func TestMoatRunJobControl(t *testing.T) {
	requireSandbox(t)
	cmd := exec.Command(moatBin, "run", "--", "sh", "-c", `echo ready; exec sleep 30`)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("first line %q", line)
	}
	var command int
	for _, c := range childrenOf(cmd.Process.Pid) {
		// The sandboxed command (sh, then sleep) is moat's child, beside the zygote.
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c)); !strings.HasPrefix(string(b), "moat-") {
			command = c
		}
	}
	if command == 0 {
		t.Fatal("the sandboxed command is not a child of moat")
	}
	waitState := func(pid int, want string) bool {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if procState(pid) == want {
				return true
			}
		}
		return false
	}
	_ = cmd.Process.Signal(syscall.SIGTSTP)
	if !waitState(command, "T") || !waitState(cmd.Process.Pid, "T") {
		t.Fatalf("after SIGTSTP: command %s, moat %s; want both stopped (T)", procState(command), procState(cmd.Process.Pid))
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	if !waitState(command, "S") || !waitState(cmd.Process.Pid, "S") {
		t.Fatalf("after SIGCONT: command %s, moat %s; want both running again", procState(command), procState(cmd.Process.Pid))
	}
}
