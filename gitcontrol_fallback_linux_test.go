package moat_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// Without a mount namespace nothing keeps a repository's hooks and config
// read-only during the run; Close is then the only defence: it moves every
// change aside, restores the original config and reports each. Control:
// the same writes, left in place, make the host's git run the payload.
func TestWithoutNamespacesGitChangesUndoneAtClose(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test")
	}
	hostGit := func(dir string, args ...string) string {
		c := exec.Command("git", append([]string{"-C", dir}, args...)...)
		c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=h", "GIT_AUTHOR_EMAIL=h@example.invalid", "GIT_COMMITTER_NAME=h", "GIT_COMMITTER_EMAIL=h@example.invalid")
		out, _ := c.CombinedOutput()
		return string(out)
	}
	newRepo := func(t *testing.T) (string, string) {
		w := t.TempDir()
		hostGit(w, "init", "-q", "-b", "main")
		os.WriteFile(filepath.Join(w, "a.txt"), []byte("a\n"), 0o644)
		hostGit(w, "add", "a.txt")
		hostGit(w, "commit", "-q", "-m", "base")
		return w, filepath.Join(t.TempDir(), "PAYLOAD-RAN")
	}
	attack := `printf '[core]\n\tfsmonitor = "touch %s"\n' "$M" >> .git/config && ` +
		`printf '#!/bin/sh\ntouch "%s"\n' "$M" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo WROTE`
	trigger := func(w string) string {
		return hostGit(w, "status") + hostGit(w, "commit", "-q", "--allow-empty", "-m", "x")
	}

	t.Run("sandbox", func(t *testing.T) {
		w, m := newRepo(t)
		config, _ := os.ReadFile(filepath.Join(w, ".git/config"))
		sb, err := moat.New(moat.Config{WorkDir: w, Enforcement: moat.BestEffort})
		if err != nil {
			t.Fatal(err)
		}
		moat.DisableNamespaces(sb)
		c := sb.Command("/bin/sh", "-c", attack)
		c.Dir, c.Env = w, []string{"M=" + m}
		out, err := c.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "WROTE") {
			t.Fatalf("without a mount namespace the writes should succeed during the run: %v %s", err, out)
		}
		if err := sb.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if got := trigger(w); fileExists(m) {
			t.Errorf("the host's git ran the sandbox's payload after Close: %s\nrefusals %v", got, sb.Refusals())
		}
		if now, _ := os.ReadFile(filepath.Join(w, ".git/config")); string(now) != string(config) {
			t.Errorf("config not restored: %q, was %q", now, config)
		}
		named := map[string]bool{}
		for _, r := range sb.Refusals() {
			if r.Kind == "git-control" {
				named[r.Subject] = true
			}
		}
		for _, p := range []string{".git/config", ".git/hooks/pre-commit"} {
			if !named[filepath.Join(w, p)] {
				t.Errorf("Refusals does not name %s: %v", p, sb.Refusals())
			}
		}
	})
	t.Run("control", func(t *testing.T) {
		w, m := newRepo(t)
		c := exec.Command("/bin/sh", "-c", attack)
		c.Dir, c.Env = w, append(os.Environ(), "M="+m)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		if got := trigger(w); !fileExists(m) {
			t.Fatalf("control: the host's git did not run the payload: %s", got)
		}
	})
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
