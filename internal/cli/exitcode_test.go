package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"sync"
	"testing"

	"github.com/moat-sandbox/moat"
)

func TestExitCode(t *testing.T) {
	notFound := fmt.Errorf("moat: nope: command not found: %w", exec.ErrNotFound)
	denied := fmt.Errorf("moat: /etc/passwd: not an executable file: %w", fs.ErrPermission)
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantLine string
	}{
		{name: "success", err: nil, wantCode: 0},
		{name: "usage", err: usagef("--nice %q: want 0 through 19", "25"), wantCode: 2, wantLine: `moat: --nice "25": want 0 through 19`},
		{name: "not found", err: notFound, wantCode: 127, wantLine: "moat: nope: command not found: executable file not found in $PATH"},
		{name: "permission", err: denied, wantCode: 126, wantLine: "moat: /etc/passwd: not an executable file: permission denied"},
		{name: "failure wins over what it wraps", err: fail(denied), wantCode: 125, wantLine: "moat: /etc/passwd: not an executable file: permission denied"},
		{name: "unsupported", err: sandboxError(&moat.UnsupportedError{Missing: []string{"landlock: off", "seccomp: off"}}), wantCode: 125,
			wantLine: "moat: host cannot enforce the sandbox: landlock: off; seccomp: off (see moat doctor, or pass --best-effort to run with less isolation)"},
		{name: "unknown error is moat's failure", err: errors.New("moat: start helper: boom"), wantCode: 125, wantLine: "moat: start helper: boom"},
		{name: "silent status", err: &exitStatus{code: 1}, wantCode: 1},
		{name: "multi-line message is one line", err: errors.New("first\nsecond"), wantCode: 125, wantLine: "moat: first second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, line := exitCode(tt.err)
			if code != tt.wantCode || line != tt.wantLine {
				t.Errorf("exitCode(%v) = %d, %q; want %d, %q", tt.err, code, line, tt.wantCode, tt.wantLine)
			}
		})
	}
}

// TestExitCodeOfCommands maps the errors the library really returns.
func TestExitCodeOfCommands(t *testing.T) {
	requireSandbox(t)
	sb, err := moat.New(moat.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	tests := []struct {
		name     string
		args     []string
		wantCode int
	}{
		{name: "success", args: []string{"true"}, wantCode: 0},
		{name: "exit code", args: []string{"sh", "-c", "exit 3"}, wantCode: 3},
		{name: "signal", args: []string{"sh", "-c", "kill -KILL $$"}, wantCode: 137},
		{name: "not found", args: []string{"definitely-not-a-command"}, wantCode: 127},
		{name: "not executable", args: []string{"/etc/passwd"}, wantCode: 126},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sb.Command(tt.args[0], tt.args[1:]...).Run()
			if err != nil && tt.wantCode != 0 {
				err = startOrWait(err)
			}
			if code, line := exitCode(err); code != tt.wantCode {
				t.Errorf("exitCode(%v) = %d (%q), want %d", err, code, line, tt.wantCode)
			}
		})
	}
}

// startOrWait classifies err as run does for start errors; wait errors
// (*moat.ExitError) pass through unchanged.
func startOrWait(err error) error {
	var ee *moat.ExitError
	if errors.As(err, &ee) {
		return err
	}
	return startError(err)
}

var (
	sandboxOnce sync.Once
	sandboxErr  error
)

// requireSandbox skips the test where this host cannot build the default,
// strict sandbox for this user (moat doctor says why).
func requireSandbox(t *testing.T) {
	t.Helper()
	sandboxOnce.Do(func() {
		sb, err := moat.New(moat.Config{})
		if err == nil {
			err = sb.Close()
		}
		sandboxErr = err
	})
	if sandboxErr != nil {
		t.Skipf("no strict sandbox on this host: %v", sandboxErr)
	}
}

func TestErrorLine(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "adds prefix", err: errors.New("x: y"), want: "moat: x: y"},
		{name: "keeps one prefix", err: errors.New("moat: x: y"), want: "moat: x: y"},
		{name: "collapses repeated prefix", err: errors.New("moat: moat: x"), want: "moat: x"},
		{name: "joins lines", err: errors.New("a\n  b\n"), want: "moat: a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorLine(tt.err); got != tt.want {
				t.Errorf("errorLine = %q, want %q", got, tt.want)
			}
		})
	}
}
