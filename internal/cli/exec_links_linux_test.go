package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMoatExecHardLinkGaps: through the moat binary, a denied file with a
// second name outside the cwd refuses the policy (exit 2, the command
// never runs); "hardLinkGaps": "warn" runs it with the warning on
// standard error; the control, a second name in the cwd, is denied there
// too and runs without a word.
func TestMoatExecHardLinkGaps(t *testing.T) {
	requireSandbox(t)
	for _, tt := range []struct {
		name, mode string
		outside    bool
		code       int
		want       string // on stderr
		stdout     string
	}{
		{"refused by default", "", true, 2, "denied file ", ""},
		{"warn", `,"hardLinkGaps":"warn"`, true, 0, "moat: warning: denied file ", "denied"},
		{"control: other name in the cwd", "", false, 0, "", "denied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parent := execTempDir(t)
			dir := filepath.Join(parent, "cwd")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			secret := filepath.Join(dir, ".env")
			if err := os.WriteFile(secret, []byte("SECRET"), 0o644); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(dir, "alias")
			if tt.outside {
				other = filepath.Join(parent, "alias")
			}
			if err := os.Link(secret, other); err != nil {
				t.Fatal(err)
			}
			script := `cat alias .env 2>/dev/null || printf denied`
			r := execCase{dir: dir, stdin: `{"command":["sh","-c","` + script + `"],"filesystem":{"deny":[".env"]` + tt.mode + `}}`, args: []string{"exec", "--policy", "-"}}.run(t)
			checks := []expect{exits(tt.code), stdoutIs(tt.stdout)}
			if tt.want != "" {
				checks = append(checks, execStderrHas(tt.want), execStderrHas(secret))
			}
			checkExec(t, r, checks...)
		})
	}
}
