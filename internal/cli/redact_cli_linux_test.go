package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// runMoatStdin runs the moat binary with stdin (nil: /dev/null) and
// returns how it ended.
func runMoatRedact(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, moatBin, args...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("moat %q did not finish in a minute", args)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("moat %q: %v", args, err)
	}
	return r
}

func redactStdoutHas(parts ...string) expect {
	return func(r result) string {
		for _, p := range parts {
			if !strings.Contains(r.stdout, p) {
				return "stdout " + redactQuote(r.stdout) + " lacks " + p
			}
		}
		return ""
	}
}

func redactOutputLacks(parts ...string) expect {
	return func(r result) string {
		for _, p := range parts {
			if strings.Contains(r.stdout+r.stderr, p) {
				return "output " + redactQuote(r.stdout+r.stderr) + " contains " + p
			}
		}
		return ""
	}
}

func redactQuote(s string) string {
	if len(s) > 300 {
		s = s[:150] + "..." + s[len(s)-150:]
	}
	return `"` + s + `"`
}

// TestRedactCLI covers moat redact's input rules and exit statuses, with
// Heimdall's privacy-filter CLI tests PF5-PF11 among them.
func TestRedactCLI(t *testing.T) {
	dir := t.TempDir()
	long := "contact alice@example.com\n" + strings.Repeat("filler text without secrets. ", 8000) + "\nTAIL-MARKER-7f3c\n"
	longFile := filepath.Join(dir, "long.txt")
	emptyFile := filepath.Join(dir, "empty.txt")
	secretFile := filepath.Join(dir, "env")
	for name, data := range map[string]string{longFile: long, emptyFile: "", secretFile: "DB_PASSWORD=hunter22x\nGITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\n"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		stdin io.Reader
		args  []string
		want  []expect
	}{
		{"PF5 help shows flags", nil, []string{"redact", "--help"},
			[]expect{exits(0), redactStdoutHas("TEXT_OR_FILE", "--cache-dir", "--variant", "--revision", "--execution-provider", "--engine", "rules", "moat setup")}},
		{"PF6 positional text", nil, []string{"redact", "hello world"}, []expect{exits(0), stdoutIs("hello world\n")}},
		{"PF7 empty stdin", strings.NewReader(""), []string{"redact"}, []expect{exits(2), oneMoatLine("empty")}},
		{"PF8 reads stdin", strings.NewReader("mail bob@example.com please"), []string{"redact"},
			[]expect{exits(0), stdoutIs("mail [REDACTED:private_email] please\n")}},
		{"PF9 long stdin keeps its tail", strings.NewReader(long), []string{"redact"},
			[]expect{exits(0), redactStdoutHas("[REDACTED:private_email]", "TAIL-MARKER-7f3c"), redactOutputLacks("alice@example.com")}},
		{"PF10 long file keeps its tail", nil, []string{"redact", longFile},
			[]expect{exits(0), redactStdoutHas("[REDACTED:private_email]", "TAIL-MARKER-7f3c"), redactOutputLacks("alice@example.com")}},
		{"PF11 execution provider cpu", nil, []string{"redact", "--execution-provider", "cpu", "x"}, []expect{exits(0), stdoutIs("x\n")}},
		{"file argument", nil, []string{"redact", secretFile},
			[]expect{exits(0), stdoutIs("DB_PASSWORD=[REDACTED:secret]\nGITHUB_TOKEN=[REDACTED:secret]\n")}},
		{"missing file is text", nil, []string{"redact", filepath.Join(dir, "nope")}, []expect{exits(0), redactStdoutHas("nope")}},
		{"directory is text", nil, []string{"redact", dir}, []expect{exits(0), stdoutIs(dir + "\n")}},
		{"empty argument", nil, []string{"redact", ""}, []expect{exits(2), oneMoatLine("input text is empty")}},
		{"empty file", nil, []string{"redact", emptyFile}, []expect{exits(2), oneMoatLine("empty", "empty.txt")}},
		{"no stdin at all", nil, []string{"redact"}, []expect{exits(2), oneMoatLine("stdin is empty")}},
		{"two arguments", nil, []string{"redact", "a", "b"}, []expect{exits(2), oneMoatLine("at most one")}},
		{"unknown engine", strings.NewReader("x"), []string{"redact", "--engine", "regex", "x"}, []expect{exits(2), oneMoatLine(`"regex"`, "rules")}},
		{"model engine not built in", nil, []string{"redact", "--engine", "model", "x"},
			[]expect{exits(1), oneMoatLine("privacy filter runtime failed", "-tags onnx", "moat setup"), stdoutIs("")}},
		{"both needs the model", nil, []string{"redact", "--engine", "both", "x"}, []expect{exits(1), oneMoatLine("moat setup"), stdoutIs("")}},
		{"rules engine explicit", nil, []string{"redact", "--engine", "rules", "ip 10.1.2.3"}, []expect{exits(0), stdoutIs("ip [REDACTED:ip_address]\n")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "model engine not built in" || tc.name == "both needs the model" {
				if r := runMoatRedact(t, nil, "redact", "--engine", "model", "probe"); r.code == 0 {
					t.Skip("this moat has the model engine built in and set up")
				}
			}
			r := runMoatRedact(t, tc.stdin, tc.args...)
			for _, e := range tc.want {
				if msg := e(r); msg != "" {
					t.Errorf("moat %q: %s", tc.args, msg)
				}
			}
		})
	}
}

// TestRedactTerminalStdin: with no argument and a terminal on standard
// input, moat redact refuses at once instead of waiting for typing.
func TestRedactTerminalStdin(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	r := runMoatRedact(t, tty, "redact")
	for _, e := range []expect{exits(2), oneMoatLine("no input", "terminal")} {
		if msg := e(r); msg != "" {
			t.Error(msg)
		}
	}
}

// TestRunRedact: moat run --redact passes the command's stdout and stderr
// through the rules engine, keeps its exit status, and catches a secret
// the command prints in two writes with a pause between them.
func TestRunRedact(t *testing.T) {
	const key, tok = "AKIAIOSFODNN7EXAMPLE", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	script := `printf 'key ` + key + `\n'; printf 'mail bob@example.com\n' >&2; ` +
		`printf 'tok ` + tok[:12] + `'; sleep 0.3; printf '` + tok[12:] + ` end\n'; printf 'no newline'; exit 7`
	r := runMoatRedact(t, nil, "run", "--redact", "--", "sh", "-c", script)
	for _, e := range []expect{
		exits(7),
		stdoutIs("key [REDACTED:secret]\ntok [REDACTED:secret] end\nno newline"),
		redactOutputLacks(key, tok, tok[:12], tok[12:], "bob@example.com"),
		func(r result) string {
			if !strings.Contains(r.stderr, "mail [REDACTED:private_email]\n") {
				return "stderr " + redactQuote(r.stderr) + " lacks the redacted line"
			}
			return ""
		},
	} {
		if msg := e(r); msg != "" {
			t.Error(msg)
		}
	}
	// Without --redact the same command prints its secrets: the control.
	r = runMoatRedact(t, nil, "run", "--", "sh", "-c", script)
	if r.code != 7 || !strings.Contains(r.stdout, key) || !strings.Contains(r.stdout, tok) {
		t.Errorf("control without --redact: code %d stdout %q", r.code, r.stdout)
	}
}

// TestRunRedactRefusals: an engine that is unknown or not available stops
// moat run before the command runs.
func TestRunRedactRefusals(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	for _, tc := range []struct {
		name string
		flag string
		want []expect
	}{
		{"unknown engine", "--redact=regex", []expect{exits(2), oneMoatLine("--redact", `"regex"`)}},
		{"model not built in", "--redact=model", []expect{exits(125), oneMoatLine("moat setup")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.flag == "--redact=model" {
				if r := runMoatRedact(t, nil, "redact", "--engine", "model", "probe"); r.code == 0 {
					t.Skip("this moat has the model engine built in and set up")
				}
			}
			r := runMoatRedact(t, nil, "run", "--workdir", filepath.Dir(marker), tc.flag, "--", "sh", "-c", "touch "+marker)
			for _, e := range tc.want {
				if msg := e(r); msg != "" {
					t.Error(msg)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
}

// TestRunRedactTerminalStdin: with a terminal on standard input, the
// command cannot write a secret into it (echo $KEY >&0) around the
// redactor; without --redact the same write reaches the terminal, the
// positive control.
func TestRunRedactTerminalStdin(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	for _, tc := range []struct {
		name  string
		args  []string
		leaks bool
	}{
		{"redact", []string{"run", "--redact", "--", "sh", "-c", "printf '" + key + "\\n' >&0; echo done"}, false},
		{"control", []string{"run", "--", "sh", "-c", "printf '" + key + "\\n' >&0; echo done"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatalf("pty: %v", err)
			}
			defer ptmx.Close()
			var seen bytes.Buffer
			done := make(chan struct{})
			go func() {
				io.Copy(&seen, ptmx)
				close(done)
			}()
			r := runMoatRedact(t, tty, tc.args...)
			tty.Close()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
			}
			if r.code != 0 || !strings.Contains(r.stdout, "done") {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			if got := strings.Contains(seen.String()+r.stdout, key); got != tc.leaks {
				t.Fatalf("secret on the terminal: %v, want %v (terminal saw %q)", got, tc.leaks, seen.String())
			}
		})
	}
}

// TestRunRedactSocketStdin: a socket on standard input (as some agent
// runtimes give their tools) is as writable as a terminal: with --redact
// the command's write into it does not reach the other end; without, it
// does (the control).
func TestRunRedactSocketStdin(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	for _, tc := range []struct {
		name  string
		flags []string
		leaks bool
	}{
		{"redact", []string{"--redact"}, false},
		{"control", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
			defer ours.Close()
			args := append([]string{"run"}, tc.flags...)
			args = append(args, "--", "sh", "-c", "printf '"+key+"\\n' >&0; echo done")
			r := runMoatRedact(t, theirs, args...)
			theirs.Close()
			ours.SetReadDeadline(time.Now().Add(time.Second))
			got, _ := io.ReadAll(ours)
			if r.code != 0 || !strings.Contains(r.stdout, "done") {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			if leaked := strings.Contains(string(got), key); leaked != tc.leaks {
				t.Fatalf("secret through the socket: %v, want %v (read %q)", leaked, tc.leaks, got)
			}
		})
	}
}
