//go:build linux

package workloads_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A repository made in the run keeps its work: git init, commits on two
// branches and a merge, in the working directory and in a subdirectory.
// After Close the host's git sees the same history, refs, index and
// working tree; only what makes a host git run a program (hooks/, the
// config's non-inert keys) is set aside and reported. Control: the
// sandbox's hook and core.fsmonitor are really gone, and the host's git
// log of the same repository before Close's check would have run it.
func TestGitInitWorkKept(t *testing.T) {
	need(t, "git")
	for _, tc := range []struct{ name, dir string }{{"top", "."}, {"subdirectory", "sub/proj"}} {
		t.Run(tc.name, func(t *testing.T) {
			w := t.TempDir()
			marker := filepath.Join(t.TempDir(), "HOOK-RAN")
			sb := newSandbox(t, config(w, false))
			script := `set -e
mkdir -p ` + tc.dir + ` && cd ` + tc.dir + `
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.invalid GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.invalid
git init -q -b main .
echo one > a.txt && git add a.txt && git commit -q -m one
git checkout -q -b feature && echo two > b.txt && git add b.txt && git commit -q -m two
git checkout -q main && echo three > c.txt && git add c.txt && git commit -q -m three
git merge -q --no-edit feature
git config user.name Sandbox
git config core.fsmonitor "touch ` + marker + `"
printf '#!/bin/sh\ntouch ` + marker + `\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout
git log --format=%s | tr '\n' ' '; echo
git rev-parse HEAD`
			t.Run("control: the same repository made on the host runs the hook", func(t *testing.T) {
				h := t.TempDir()
				hostRun(t, h, "/bin/sh", "-c", script)
				hostRun(t, filepath.Join(h, tc.dir), "git", "checkout", "-q", "feature")
				if _, err := os.Stat(marker); err != nil {
					t.Fatalf("control: the host's git did not run the hook, so the test detects nothing")
				}
				os.Remove(marker)
			})
			r := sh(t, sb, script)
			mustPass(t, "git init, commit, merge", r)
			lines := strings.Split(strings.TrimSpace(r.Out), "\n")
			head := lines[len(lines)-1]
			if err := sb.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			repo := filepath.Join(w, tc.dir)
			if got := strings.TrimSpace(hostRun(t, repo, "git", "rev-parse", "HEAD")); got != head {
				t.Errorf("HEAD after Close is %q, the run made %q", got, head)
			}
			log := hostRun(t, repo, "git", "log", "--format=%s")
			for _, s := range []string{"Merge branch 'feature'", "three", "two", "one"} {
				if !strings.Contains(log, s) {
					t.Errorf("history lost %q after Close:\n%s", s, log)
				}
			}
			if st := porcelain(t, repo); strings.TrimSpace(st) != "" {
				t.Errorf("the index or working tree differs after Close:\n%s", st)
			}
			if b := hostRun(t, repo, "git", "branch", "--list"); !strings.Contains(b, "feature") {
				t.Errorf("branch feature lost: %s", b)
			}
			hostRun(t, repo, "git", "checkout", "-q", "feature")
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the host's git ran the sandbox's hook or fsmonitor")
			}
			if _, err := os.Stat(filepath.Join(repo, ".git/hooks/post-checkout")); err == nil {
				t.Errorf("the sandbox's hook is still in place")
			}
			cfg, _ := os.ReadFile(filepath.Join(repo, ".git/config"))
			if strings.Contains(string(cfg), "fsmonitor") || !strings.Contains(string(cfg), "Sandbox") {
				t.Errorf("the config is not the inert part of the sandbox's:\n%s", cfg)
			}
			var said bool
			for _, x := range sb.Refusals() {
				said = said || strings.Contains(x.Detail, "kept with its objects, refs, index and history")
			}
			if !said {
				t.Errorf("Refusals does not say the repository was kept: %v", sb.Refusals())
			}
		})
	}
}
