package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMoatExecFragments is Heimdall's L15–L17 through the moat binary:
// the cwd's fragment files come after the document's patterns, in both
// seeds' names; .pi/heimdall.json and a parent's fragments are not read.
// Each case has a control that shows the probe sees a deny when there is
// one. (The attacks themselves, run unprivileged, are in test/escape's
// policyfs_test.go.)
func TestMoatExecFragments(t *testing.T) {
	requireSandbox(t)
	script := `cat secret.txt 2>/dev/null || printf denied; echo new > write.txt 2>/dev/null || printf :refused`
	cases := []struct {
		name   string
		files  map[string]string // relative to the cwd's parent: cwd/... is in the cwd
		fs     string
		want   string
		writen bool
	}{
		{"L15 heimdall fragments", map[string]string{"cwd/.heimdall-deny": "!secret.txt\n", "cwd/.heimdall-write": "write.txt\n"}, `{"deny":["secret.txt"]}`, "secret", true},
		{"L15 moat fragments", map[string]string{"cwd/.moat-deny": "# restore\n!secret.txt\n", "cwd/.moat-write": "write.txt\n"}, `{"deny":["secret.txt"]}`, "secret", true},
		{"L15 control: empty fragments", map[string]string{"cwd/.moat-deny": "\n", "cwd/.moat-write": "\n"}, `{"deny":["secret.txt"]}`, "denied:refused", false},
		{"L16 .pi/heimdall.json is not read", map[string]string{"cwd/.pi/heimdall.json": `{"filesystem":{"deny":["secret.txt"]}}`}, `{}`, "secret:refused", false},
		{"L17 a parent's fragments are not read", map[string]string{".heimdall-deny": "secret.txt\n", ".moat-deny": "secret.txt\n"}, `{}`, "secret:refused", false},
		{"L17 control: the same fragment in the cwd", map[string]string{"cwd/.moat-deny": "secret.txt\n"}, `{}`, "denied:refused", false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			parent := execTempDir(t)
			dir := filepath.Join(parent, "cwd")
			files := map[string]string{"cwd/secret.txt": "secret", "cwd/write.txt": "old"}
			for k, v := range tt.files {
				files[k] = v
			}
			for name, content := range files {
				p := filepath.Join(parent, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := execCase{dir: dir, stdin: fmt.Sprintf(`{"command":["sh","-c",%q],"filesystem":%s}`, script, tt.fs), args: []string{"exec", "--policy", "-"}}.run(t)
			checkExec(t, r, exits(0), stdoutIs(tt.want))
			b, _ := os.ReadFile(filepath.Join(dir, "write.txt"))
			if got := string(b) == "new\n"; got != tt.writen {
				t.Errorf("write.txt on the host is %q; want written=%v", b, tt.writen)
			}
		})
	}
}

// TestMoatExecPatternErrors: a bad pattern or fragment is exit 2 with the
// message that names it, and the command never runs; the control runs.
func TestMoatExecPatternErrors(t *testing.T) {
	requireSandbox(t)
	cases := []struct {
		name, fs, frag, want string
	}{
		{"invalid pattern", `{"deny":["a["],"writable":["out"]}`, "", `invalid filesystem pattern "a[": unterminated character class [`},
		{"fragment is a directory", `{"writable":["out"]}`, ".heimdall-deny", "moat: invalid filesystem fragment "},
		{"control", `{"deny":["./a"],"writable":["out"]}`, "", ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			dir := execTempDir(t)
			if err := os.MkdirAll(filepath.Join(dir, "out"), 0o777); err != nil {
				t.Fatal(err)
			}
			if tt.frag != "" {
				if err := os.Mkdir(filepath.Join(dir, tt.frag), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			r := execCase{dir: dir, stdin: `{"command":["touch","out/ran"],"filesystem":` + tt.fs + `}`, args: []string{"exec", "--policy", "-"}}.run(t)
			_, err := os.Stat(filepath.Join(dir, "out", "ran"))
			if tt.want == "" {
				checkExec(t, r, exits(0))
				if err != nil {
					t.Errorf("control: the command did not run: %v", err)
				}
				return
			}
			checkExec(t, r, exits(2), execStderrHas(tt.want))
			if err == nil {
				t.Error("the command ran")
			}
		})
	}
}
