package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecWildcardNeverOpensProtected: a grant of a protected path itself
// lifts its protection, which is how a user opens ~/.ssh on purpose. A
// wildcard pattern that happens to match such a path ("~/.*", ".*",
// "**/.*", ".s*", "**/id_rsa") is no purpose: the key stays unreadable and
// unwritten, and ~/.aws/config unread. Control: the literal "~/.ssh" still
// opens it, so the probe can see and change a key when allowed to.
func TestExecWildcardNeverOpensProtected(t *testing.T) {
	script := `cat "$HOME/.ssh/id_rsa" 2>/dev/null; echo appended >> "$HOME/.ssh/id_rsa" 2>/dev/null && echo SSH-WRITE; cat "$HOME/.aws/config" 2>/dev/null; echo done`
	for _, tc := range []struct {
		name     string
		writable []string
		opened   bool
	}{
		{name: "~/.*", writable: []string{"~/.*"}},
		{name: ".*", writable: []string{".*"}},
		{name: "**/.*", writable: []string{"**/.*"}},
		{name: ".s*", writable: []string{".s*"}},
		{name: "**/id_rsa", writable: []string{"**/id_rsa"}},
		{name: "control: ~/.ssh named", writable: []string{"~/.ssh"}, opened: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, _ := execHomeFixture(t)
			key := filepath.Join(home, ".ssh", "id_rsa")
			writeFile(t, key, "PRIVATE-KEY\n")
			writeFile(t, filepath.Join(home, ".aws", "config"), "AWS-CONFIG\n")
			doc := map[string]any{
				"command":    []string{"/bin/sh", "-c", script},
				"filesystem": map[string]any{"writable": tc.writable},
			}
			res := execPolicyPath(t, doc, home, home)
			if !strings.Contains(res.Stdout, "done") {
				t.Fatalf("the probe did not finish: %s", res)
			}
			b, err := os.ReadFile(key)
			if err != nil {
				t.Fatal(err)
			}
			if tc.opened {
				if !strings.Contains(res.Stdout, "PRIVATE-KEY") || !strings.Contains(string(b), "appended") {
					t.Fatalf("control: the literal ~/.ssh should open the key: %s (key now %q)", res, b)
				}
				return
			}
			if strings.Contains(res.Stdout, "PRIVATE-KEY") || strings.Contains(res.Stdout, "SSH-WRITE") || strings.Contains(string(b), "appended") {
				t.Errorf("%v opened ~/.ssh/id_rsa: %s (key now %q)", tc.writable, res, b)
			}
			if strings.Contains(res.Stdout, "AWS-CONFIG") {
				t.Errorf("%v opened ~/.aws/config: %s", tc.writable, res)
			}
		})
	}
}
