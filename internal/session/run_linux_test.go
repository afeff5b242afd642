package session

import (
	"context"
	"strings"
	"testing"
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
