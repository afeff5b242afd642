package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/policy"
)

func TestRun(t *testing.T) {
	s := newSession(t, newManager(t, Options{}), CreateRequest{})
	for _, tc := range []struct {
		name   string
		req    RunRequest
		code   int
		stdout string
		stderr string
		signal string
	}{
		{"echo", RunRequest{Argv: []string{"echo", "hello"}}, 0, "hello\n", "", ""},
		{"exit code", RunRequest{Argv: []string{"sh", "-c", "echo oops >&2; exit 3"}}, 3, "", "oops\n", ""},
		{"stdin", RunRequest{Argv: []string{"cat"}, Stdin: []byte("in put")}, 0, "in put", "", ""},
		{"env", RunRequest{Argv: []string{"sh", "-c", "echo $FOO"}, Env: map[string]string{"FOO": "bar"}}, 0, "bar\n", "", ""},
		{"cwd", RunRequest{Argv: []string{"sh", "-c", "mkdir -p sub && cd sub && pwd >/dev/null; echo ok"}}, 0, "ok\n", "", ""},
		{"signal", RunRequest{Argv: []string{"sh", "-c", "kill -KILL $$"}}, -1, "", "", "KILL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Run(context.Background(), tc.req, nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ExitCode != tc.code || string(res.Stdout) != tc.stdout || string(res.Stderr) != tc.stderr || res.Signal != tc.signal {
				t.Errorf("got code %d signal %q stdout %q stderr %q; want %d %q %q %q", res.ExitCode, res.Signal, res.Stdout, res.Stderr, tc.code, tc.signal, tc.stdout, tc.stderr)
			}
		})
	}
}

func TestRunCwd(t *testing.T) {
	s := newSession(t, newManager(t, Options{}), CreateRequest{})
	if _, err := s.Run(context.Background(), RunRequest{Argv: []string{"mkdir", "sub"}}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), RunRequest{Argv: []string{"pwd"}, Cwd: "sub"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); !strings.HasSuffix(got, "/sub") {
		t.Errorf("pwd in cwd sub: %q", got)
	}
}

// TestRunStreams checks that output reaches Output while the command
// runs, in the order written across the two streams: the command waits,
// after each write, for a file that only the Output callback creates.
func TestRunStreams(t *testing.T) {
	s := newSession(t, newManager(t, Options{}), CreateRequest{})
	script := `wait_for() { while [ ! -e "$1" ]; do sleep 0.01; done; }
printf a; wait_for go1; printf b >&2; wait_for go2; printf c`
	var got []string
	out := func(st Stream, data []byte) {
		got = append(got, string(st)+":"+string(data))
		if n := len(got); n <= 2 {
			name := filepath.Join(s.Sandbox().WorkDir(), "go"+strconv.Itoa(n))
			if err := os.WriteFile(name, nil, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	res, err := s.Run(context.Background(), RunRequest{Argv: []string{"sh", "-c", script}, Timeout: 20 * time.Second}, out)
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut {
		t.Fatalf("timed out: output was not streamed as it came; got %q", got)
	}
	if want := []string{"stdout:a", "stderr:b", "stdout:c"}; !slices.Equal(got, want) {
		t.Errorf("streamed %q, want %q", got, want)
	}
	if string(res.Stdout) != "ac" || string(res.Stderr) != "b" {
		t.Errorf("captured %q %q", res.Stdout, res.Stderr)
	}
}

func TestRunOutputCap(t *testing.T) {
	s := newSession(t, newManager(t, Options{OutputCap: 1000}), CreateRequest{})
	var streamed int
	res, err := s.Run(context.Background(), RunRequest{Argv: []string{"sh", "-c", "head -c 5000 /dev/zero; head -c 10 /dev/zero >&2"}}, func(_ Stream, d []byte) { streamed += len(d) })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) != 1000 || !res.StdoutTruncated || len(res.Stderr) != 10 || res.StderrTruncated || streamed != 5010 {
		t.Errorf("stdout %d truncated %v, stderr %d truncated %v, streamed %d", len(res.Stdout), res.StdoutTruncated, len(res.Stderr), res.StderrTruncated, streamed)
	}
}

func TestRunTimeout(t *testing.T) {
	m := newManager(t, Options{Policies: []Policy{
		testPolicy(t, "default"),
		withResult(testPolicy(t, "capped"), func(r *policy.Result) { r.Config.Limits.Timeout = 300 * time.Millisecond }),
	}})
	for _, tc := range []struct {
		policy  string
		timeout time.Duration
	}{
		{"default", 200 * time.Millisecond}, // the request's
		{"capped", 0},                       // the policy's
		{"capped", time.Hour},               // the policy's caps the request's
	} {
		t.Run(tc.policy+"/"+tc.timeout.String(), func(t *testing.T) {
			s := newSession(t, m, CreateRequest{Policy: tc.policy})
			res, err := s.Run(context.Background(), RunRequest{Argv: []string{"sleep", "60"}, Timeout: tc.timeout}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut || res.Limit != "timeout" || res.Signal != "KILL" || res.ExitCode != -1 {
				t.Errorf("got %+v, want timed out by the timeout limit", res)
			}
		})
	}
}

// TestRunCancelKillsTree cancels a Run's context, as a client that went
// away does, and checks on the host that the command's processes are
// gone: the marker's pid is found first (the control), then must vanish.
func TestRunCancelKillsTree(t *testing.T) {
	s := newSession(t, newManager(t, Options{}), CreateRequest{})
	marker := "4242.4" + strconv.Itoa(os.Getpid())
	ctx, cancel := context.WithCancel(context.Background())
	type ran struct {
		res RunResult
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := s.Run(ctx, RunRequest{Argv: []string{"sh", "-c", "sleep " + marker + " & sleep " + marker + "; wait"}}, nil)
		done <- ran{res, err}
	}()
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pids = pidsWithArg(t, marker)
	}
	if len(pids) < 2 {
		t.Fatalf("control: the two sleeps never showed on the host (found %v)", pids)
	}
	cancel()
	select {
	case r := <-done:
		if r.err != nil || r.res.Signal != "KILL" {
			t.Errorf("Run after cancel: %+v, %v", r.res, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	for _, pid := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			if slices.Contains(pidsWithArg(t, marker), pid) {
				t.Errorf("pid %d (sleep %s) outlived the cancelled Run", pid, marker)
			}
		}
	}
}

// pidsWithArg lists the host's processes with arg among their arguments.
func pidsWithArg(t testing.TB, arg string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if slices.Contains(strings.Split(string(b), "\x00"), arg) {
			out = append(out, pid)
		}
	}
	return out
}

func TestRunRefuses(t *testing.T) {
	s := newSession(t, newManager(t, Options{}), CreateRequest{})
	for _, tc := range []struct {
		name string
		req  RunRequest
		code string
	}{
		{"empty argv", RunRequest{}, CodeBadRequest},
		{"serve token", RunRequest{Argv: []string{"env"}, Env: map[string]string{"MOAT_SERVE_TOKEN": "x"}}, CodeBadRequest},
		{"serve token file", RunRequest{Argv: []string{"env"}, Env: map[string]string{"MOAT_SERVE_TOKEN_FILE": "x"}}, CodeBadRequest},
		{"serve anything", RunRequest{Argv: []string{"env"}, Env: map[string]string{"moat_serve_url": "x"}}, CodeBadRequest},
		{"bad env name", RunRequest{Argv: []string{"env"}, Env: map[string]string{"A=B": "x"}}, CodeBadRequest},
		{"NUL", RunRequest{Argv: []string{"echo", "a\x00b"}}, CodeBadRequest},
		{"negative timeout", RunRequest{Argv: []string{"true"}, Timeout: -1}, CodeBadRequest},
		{"not found", RunRequest{Argv: []string{"no-such-command-here"}}, CodeStart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Run(context.Background(), tc.req, nil)
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Errorf("got %v, want code %s", err, tc.code)
			}
		})
	}
	// The control: a harmless variable reaches the command.
	res, err := s.Run(context.Background(), RunRequest{Argv: []string{"sh", "-c", "echo $OTHER"}, Env: map[string]string{"OTHER": "y"}}, nil)
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "y" {
		t.Errorf("control: env OTHER=y: %q, %v", res.Stdout, err)
	}
}
