package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecAndPolicyCommandLine checks, in this process, the invocations of
// moat exec and moat policy that start no sandbox.
func TestExecAndPolicyCommandLine(t *testing.T) {
	dir := t.TempDir()
	valid := filepath.Join(dir, "valid.json")
	bogus := filepath.Join(dir, "bogus.json")
	for p, doc := range map[string]string{valid: `{"cwd":".","command":["true"]}`, bogus: `{"command":["true"],"bogus":1}`} {
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string // a substring of stderr; "" means empty
		wantStdout string // a substring of stdout; "" means empty
	}{
		{name: "validate ok", args: []string{"policy", "validate", valid}},
		{name: "validate unknown field", args: []string{"policy", "validate", bogus}, wantCode: 2, wantStderr: `moat: policy "` + bogus + `": unknown policy field: bogus` + "\n"},
		{name: "validate needs a file", args: []string{"policy", "validate"}, wantCode: 2, wantStderr: "want one document"},
		{name: "validate one file", args: []string{"policy", "validate", valid, valid}, wantCode: 2, wantStderr: "want one document"},
		{name: "validate empty stdin", args: []string{"policy", "validate", "-"}, wantCode: 2, wantStderr: "unexpected end"},
		{name: "schema", args: []string{"policy", "schema"}, wantStdout: `"additionalProperties": false`},
		{name: "schema takes no arguments", args: []string{"policy", "schema", "x"}, wantCode: 2, wantStderr: "unexpected argument"},
		{name: "policy alone", args: []string{"policy"}, wantCode: 2, wantStderr: "missing subcommand"},
		{name: "exec without command", args: []string{"exec"}, wantCode: 2, wantStderr: "missing command"},
		{name: "exec policy and command", args: []string{"exec", "--policy", valid, "--", "true"}, wantCode: 2, wantStderr: "--policy cannot be combined with direct exec arguments (a command)"},
		{name: "exec policy and flags", args: []string{"exec", "--policy", valid, "--no-proc", "--stdio", "piped"}, wantCode: 2, wantStderr: "(--stdio, --no-proc)"},
		{name: "exec allow and deny", args: []string{"exec", "--allow-env", "A", "--deny-env", "B", "--", "true"}, wantCode: 2, wantStderr: "--allow-env and --deny-env cannot be combined"},
		{name: "exec bad stdio", args: []string{"exec", "--stdio", "tty", "--", "true"}, wantCode: 2, wantStderr: `--stdio "tty": want inherit or piped`},
		{name: "exec bad env name", args: []string{"exec", "--allow-env", "A=B", "--", "true"}, wantCode: 2, wantStderr: "--allow-env"},
		{name: "exec invalid cwd", args: []string{"exec", "--cwd", filepath.Join(dir, "missing"), "--", "true"}, wantCode: 2, wantStderr: "moat: invalid cwd: " + filepath.Join(dir, "missing") + "\n"},
		{name: "exec a bad policy", args: []string{"exec", "--policy", bogus}, wantCode: 2, wantStderr: "unknown policy field: bogus"},
		{name: "exec a missing policy", args: []string{"exec", "--policy", filepath.Join(dir, "none.json")}, wantCode: 2, wantStderr: "no such file"},
		{name: "exec help names moat's flags", args: []string{"exec", "--help"}, wantStdout: "moat run --env NAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := executeCaptured(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if tt.wantStderr == "" && stderr != "" || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q, want %q", stderr, tt.wantStderr)
			}
			if tt.wantStdout == "" && stdout != "" || !strings.Contains(stdout, tt.wantStdout) {
				t.Errorf("stdout %q, want %q", stdout, tt.wantStdout)
			}
		})
	}
}

// TestPolicySchemaIsTheLibrarys: moat policy schema prints the library's
// schema, valid JSON.
func TestPolicySchemaIsTheLibrarys(t *testing.T) {
	code, stdout, _ := executeCaptured(t, "policy", "schema")
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &v) != nil || v["$schema"] == nil {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
}
