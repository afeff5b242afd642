package cli

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMoatRunRefusalSummary: after the command, moat run prints one line per
// refusal on stderr, after what the command wrote and without touching it;
// --quiet prints none.
func TestMoatRunRefusalSummary(t *testing.T) {
	requireSandbox(t)
	lookup := func(names ...string) string {
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "getent hosts %s >/dev/null; ", n)
		}
		return b.String() + "echo out; echo err >&2"
	}
	line := func(name string) string {
		return "moat: dns: " + name + ": the sandbox has no network (--network allow-list --allow-domain " + name + ")\n"
	}
	var many []string
	for i := range 15 {
		many = append(many, fmt.Sprintf("n%02d.moat-cli.invalid", i))
	}
	var manyLines strings.Builder
	for _, n := range many[:maxSummaryLines-1] {
		manyLines.WriteString(line(n))
	}
	manyLines.WriteString("moat: ... and 6 more\n")
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"one name", []string{"run", "--", "sh", "-c", lookup("pypi.moat-cli.invalid")}, "err\n" + line("pypi.moat-cli.invalid")},
		{"a name twice is one line", []string{"run", "--", "sh", "-c", lookup("twice.moat-cli.invalid", "twice.moat-cli.invalid")}, "err\n" + line("twice.moat-cli.invalid")},
		{"quiet", []string{"run", "--quiet", "--", "sh", "-c", lookup("quiet.moat-cli.invalid")}, "err\n"},
		{"bounded", []string{"run", "--", "sh", "-c", lookup(many...)}, "err\n" + manyLines.String()},
		{"nothing refused", []string{"run", "--", "sh", "-c", lookup()}, "err\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runMoat(t, nil, tt.args...)
			for _, e := range []expect{exits(0), stdoutIs("out\n"), stderrIs(tt.wantStderr)} {
				if p := e(r); p != "" {
					t.Error(p)
				}
			}
		})
	}
}

// TestMoatShellRefusalSummary: moat shell prints the summary once the shell
// is gone, and --quiet turns it off.
func TestMoatShellRefusalSummary(t *testing.T) {
	requireSandbox(t)
	const name = "shell.moat-cli.invalid"
	want := "moat: dns: " + name + ": the sandbox has no network (--network allow-list --allow-domain " + name + ")\n"
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			args := []string{"shell", "--shell", "/bin/sh"}
			if quiet {
				args = append(args, "--quiet")
			}
			cmd := exec.CommandContext(ctx, moatBin, args...)
			cmd.Stdin = strings.NewReader("getent hosts " + name + " >/dev/null; echo $((6*7))\n")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("moat shell: %v; stderr %q", err, stderr.String())
			}
			if !strings.Contains(stdout.String(), "42") {
				t.Errorf("stdout %q, want 42", stdout.String())
			}
			if got := stderr.String(); quiet && got != "" || !quiet && got != want {
				t.Errorf("stderr %q, want %q", got, map[bool]string{true: "", false: want}[quiet])
			}
		})
	}
}
