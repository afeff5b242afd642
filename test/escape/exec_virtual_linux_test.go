//go:build linux

package escape_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestExecVirtualFileAtMissingPath: a policy document's virtual file may
// sit where nothing exists on the host (issue 23), in the cwd and in /etc:
// the sandbox reads its content and cannot write it, while the host
// directory is never written (its listing is the same before and after,
// and nothing is left behind). The cwd's existing files stay writable
// under writable ["."], and a denied one stays unreadable through the
// overlay. The control writes the same name without the
// virtual file: it is created (in the cwd, which is writable).
func TestExecVirtualFileAtMissingPath(t *testing.T) {
	etc := "/etc/moat-virtual-" + filepath.Base(t.TempDir())
	tests := []struct {
		name    string
		virtual bool
		want    string
	}{
		{"virtual", true, "cwd-virtual:etc-virtual:cwd-write-failed:etc-write-failed:regular-edited:env-denied"},
		{"control: no virtual file", false, "cwd-missing:etc-missing:cwd-written:etc-write-failed:regular-edited:env-denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, cwd := execHomeFixture(t)
			writeFile(t, filepath.Join(cwd, "regular.txt"), "old")
			writeFile(t, filepath.Join(cwd, ".env"), "SECRET")
			script := `cat new.txt 2>/dev/null && printf : || printf cwd-missing:; cat ` + etc + ` 2>/dev/null && printf : || printf etc-missing:; ` +
				`echo x > new.txt 2>/dev/null && printf cwd-written: || printf cwd-write-failed:; echo x > ` + etc + ` 2>/dev/null && printf etc-written: || printf etc-write-failed:; ` +
				`echo edited > regular.txt && printf regular-edited:; cat .env 2>/dev/null || printf env-denied`
			doc := map[string]any{
				"command":    []string{"/bin/sh", "-c", script},
				"filesystem": map[string]any{"writable": []string{"."}, "deny": []string{".env"}},
			}
			if tt.virtual {
				doc["filesystem"].(map[string]any)["virtual"] = map[string]string{filepath.Join(cwd, "new.txt"): "cwd-virtual", etc: "etc-virtual"}
			}
			before, etcBefore := listing(t, cwd), listing(t, "/etc")
			res := execPolicyEnv(t, doc, cwd, []string{"HOME=" + home, "PATH=/usr/bin:/bin"})
			if res.Code != 0 || res.Stdout != tt.want {
				t.Errorf("stdout %q, want %q; %s", res.Stdout, tt.want, res)
			}
			fileIs(t, filepath.Join(cwd, "regular.txt"), "edited\n")
			if tt.virtual {
				if after := listing(t, cwd); !slices.Equal(before, after) {
					t.Errorf("the cwd on the host: %q before, %q after; want it unchanged", before, after)
				}
			}
			if after := listing(t, "/etc"); !slices.Equal(etcBefore, after) {
				t.Errorf("/etc on the host changed: %d entries before, %d after", len(etcBefore), len(after))
			}
			absent(t, etc)
		})
	}
}

func listing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
