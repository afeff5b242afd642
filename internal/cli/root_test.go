package cli

import (
	"os"
	"strings"
	"testing"
)

// executeCaptured runs execute in this process with files for stdio and
// returns the exit code, stdout and stderr. Use it only for invocations
// that start no sandbox.
func executeCaptured(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	open := func(name string) *os.File {
		f, err := os.Create(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	in, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, errf := open("stdout"), open("stderr")
	code := execute(args, stdio{in: in, out: out, err: errf})
	read := func(name string) string {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return code, read("stdout"), read("stderr")
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string // the exact stderr; "" means empty
		wantStdout string // a substring of stdout; "" means empty stdout
	}{
		{name: "no command", args: nil, wantCode: 2, wantStderr: "moat: missing command; see moat --help\n"},
		{name: "unknown command", args: []string{"bogus"}, wantCode: 2, wantStderr: "moat: unknown command \"bogus\"; see moat --help\n"},
		{name: "unknown command suggestion", args: []string{"rn"}, wantCode: 2, wantStderr: "moat: unknown command \"rn\"; did you mean run?\n"},
		{name: "unknown root flag", args: []string{"--bogus"}, wantCode: 2, wantStderr: "moat: unknown flag: --bogus\n"},
		{name: "unknown run flag", args: []string{"run", "--bogus"}, wantCode: 2, wantStderr: "moat: unknown flag: --bogus\n"},
		{name: "run without command", args: []string{"run"}, wantCode: 2, wantStderr: "moat: run: missing command (usage: moat run [flags] [--] COMMAND [ARG...])\n"},
		{name: "run with only flags", args: []string{"run", "--memory", "1G", "--"}, wantCode: 2, wantStderr: "moat: run: missing command (usage: moat run [flags] [--] COMMAND [ARG...])\n"},
		{name: "run bad size", args: []string{"run", "--memory", "12X", "--", "true"}, wantCode: 2, wantStderr: "moat: --memory \"12X\": want a size like 512M or 2G\n"},
		{name: "shell takes no arguments", args: []string{"shell", "ls"}, wantCode: 2, wantStderr: "moat: shell: unexpected argument \"ls\"\n"},
		{name: "shell bad flag", args: []string{"shell", "--nice", "20"}, wantCode: 2, wantStderr: "moat: --nice \"20\": want 0 (unchanged) through 19; priority can only be lowered\n"},
		{name: "version takes no arguments", args: []string{"version", "x"}, wantCode: 2, wantStderr: "moat: version: unexpected argument \"x\"\n"},
		{name: "doctor bad flag", args: []string{"doctor", "--yaml"}, wantCode: 2, wantStderr: "moat: unknown flag: --yaml\n"},
		{name: "help", args: []string{"--help"}, wantCode: 0, wantStdout: "moat run"},
		{name: "run help", args: []string{"run", "--help"}, wantCode: 0, wantStdout: "--memory SIZE"},
		{name: "shell help", args: []string{"shell", "-h"}, wantCode: 0, wantStdout: "--shell PATH"},
		{name: "help command", args: []string{"help", "doctor"}, wantCode: 0, wantStdout: "--json"},
		{name: "version", args: []string{"version"}, wantCode: 0, wantStdout: "moat "},
		{name: "version flag", args: []string{"--version"}, wantCode: 0, wantStdout: "moat "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := executeCaptured(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if stderr != tt.wantStderr {
				t.Errorf("stderr %q, want %q", stderr, tt.wantStderr)
			}
			if tt.wantStdout == "" && stdout != "" || !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout %q, want it to contain %q", stdout, tt.wantStdout)
			}
		})
	}
}

func TestVersionLine(t *testing.T) {
	got := versionLine()
	if !strings.HasPrefix(got, "moat ") || !strings.Contains(got, " (go") || !strings.HasSuffix(got, ")") || strings.Count(got, "/") != 1 {
		t.Errorf("versionLine() = %q, want moat <version> (<go version>, <os>/<arch>)", got)
	}
}
