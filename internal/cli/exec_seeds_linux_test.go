package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMoatExecHomeAndTmp is Heimdall's L2 and L12 in moat's terms. L2:
// the home's dotfiles that tools need are readable; in moat that is the
// curated list of the default level, so git reads the user's global
// config; the control is strict, which shows nothing of the home. L12:
// the sandbox has a private writable /tmp: mktemp, write and read back
// work, and nothing appears in the host's /tmp.
func TestMoatExecHomeAndTmp(t *testing.T) {
	home := execTempDir(t)
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = L2 Reader\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitName := `git config --global --get user.name || printf unreadable`
	prefix := "moat-l12-" + filepath.Base(home)
	tests := []struct {
		name string
		c    execCase
		want []expect
	}{
		{"L2 the home's git config is readable", execCase{env: []string{"HOME=" + home},
			stdin: `{"command":["sh","-c",` + jsonString(gitName) + `],"isolation":"default"}`, args: []string{"exec", "--policy", "-"}},
			[]expect{exits(0), stdoutIs("L2 Reader\n")}},
		{"L2 control: strict shows nothing of the home", execCase{env: []string{"HOME=" + home},
			stdin: `{"command":["sh","-c",` + jsonString(gitName) + `],"isolation":"strict"}`, args: []string{"exec", "--policy", "-"}},
			[]expect{exits(0), stdoutIs("unreadable")}},
		{"L12 a private writable /tmp", execCase{args: []string{"exec", "--", "sh", "-c",
			`f=$(mktemp /tmp/` + prefix + `.XXXXXX) && echo ok > "$f" && cat "$f"`}},
			[]expect{exits(0), stdoutIs("ok\n")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkExec(t, tt.c.run(t), tt.want...)
		})
	}
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+".*"))
	if len(left) > 0 {
		for _, f := range left {
			os.Remove(f)
		}
		t.Errorf("the sandbox's /tmp file reached the host's /tmp: %s", strings.Join(left, " "))
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
