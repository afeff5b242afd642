//go:build linux

package escape_test

// The outside review of the Close scan: a no-op run must leave the user's
// own files that the scan cannot compare by content (F2), and the sweep
// after a SIGKILL must set aside what the sandbox created inside an
// existing .git (F4).

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// TestCloseScanNoOpKeepsUncomparable (F2): a no-op run in an existing
// repository leaves in place a hook over 16 MiB, an unreadable hook, a
// 1.5 MiB .git/config and a .claude/commands/ of 5,000 entries, all the
// user's. Before, each was "unsure" and so moved to the quarantine (the
// config with nothing written back). Control: the same kinds of file
// written by the sandbox in a new repository are set aside.
func TestCloseScanNoOpKeepsUncomparable(t *testing.T) {
	t.Parallel()
	need(t, "git")
	w := t.TempDir()
	if r := hostSh(t, "cd "+w+" && git init -q ."); r.Code != 0 {
		t.Fatal(r)
	}
	big := filepath.Join(w, ".git/hooks/pre-push")
	writeFile(t, big, "#!/bin/sh\n")
	if err := os.Truncate(big, 17<<20); err != nil {
		t.Fatal(err)
	}
	unread := filepath.Join(w, ".git/hooks/post-merge")
	writeFile(t, unread, "#!/bin/sh\n")
	if err := os.Chmod(unread, 0); err != nil {
		t.Fatal(err)
	}
	var cfg bytes.Buffer
	cfg.WriteString("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
	for i := 0; cfg.Len() < 3<<19; i++ {
		fmt.Fprintf(&cfg, "[branch \"b%06d\"]\n\tremote = origin\n\tmerge = refs/heads/b%06d\n", i, i)
	}
	writeFile(t, filepath.Join(w, ".git/config"), cfg.String())
	for i := 0; i < 5000; i++ {
		writeFile(t, filepath.Join(w, ".claude/commands", fmt.Sprintf("c%d.md", i)), "x\n")
	}
	time.Sleep(1500 * time.Millisecond) // older than the scan's ctime margin
	sb, err := moat.New(moat.Config{WorkDir: w})
	if err != nil {
		t.Fatal(err)
	}
	// Control: a new repository with the same kinds of file, written in the run.
	r := sh(t, sb, `cd `+w+` && git init -q sub && truncate -s 17M sub/.git/hooks/pre-push && printf '#!/bin/sh\n' > sub/.git/hooks/post-merge && chmod 0 sub/.git/hooks/post-merge && cat .git/config >> sub/.git/config && printf '[core]\n\tfsmonitor = echo PWN\n' >> sub/.git/config && echo OK`)
	mustContain(t, r, "OK")
	closeWithin(t, sb, 60*time.Second)
	for _, p := range []string{big, unread, filepath.Join(w, ".claude/commands/c4999.md")} {
		if !exists(p) {
			t.Errorf("the user's %s was moved by a run that did nothing: %v", p, sb.Refusals())
		}
	}
	fileIs(t, filepath.Join(w, ".git/config"), cfg.String())
	for _, p := range []string{"sub/.git/hooks", "sub/.git/config"} {
		if quarantinedAt(t, sb.Refusals(), "git-control", filepath.Join(w, p)) == "" {
			t.Errorf("control: %s written by the sandbox was not set aside: %v", p, sb.Refusals())
		}
	}
	got, err := os.ReadFile(filepath.Join(w, "sub/.git/config"))
	if err != nil || bytes.Contains(got, []byte("PWN")) || !bytes.Contains(got, []byte("repositoryformatversion")) {
		t.Errorf("the new repository's config over 1 MiB got no inert config back: %v\n%.300s", err, got)
	}
	if r := hostSh(t, "cd "+w+"/sub && git status --short >/dev/null && echo STATUS-OK"); !strings.Contains(r.Stdout, "STATUS-OK") {
		t.Errorf("the new repository does not work after Close: %v", r)
	}
}

// gitdirCrashRoleEnv makes the test binary run a sandbox in the existing
// repository it names, plant the script of gitdirCrashScriptEnv there,
// say so and wait to be killed.
const (
	gitdirCrashRoleEnv   = "MOAT_ESCAPE_GITDIR_CRASH_ROLE"
	gitdirCrashScriptEnv = "MOAT_ESCAPE_GITDIR_CRASH_SCRIPT"
)

func init() {
	dir := os.Getenv(gitdirCrashRoleEnv)
	if dir == "" {
		return
	}
	sb, err := moat.New(moat.Config{WorkDir: dir})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	c := sb.Command("sh", "-c", os.Getenv(gitdirCrashScriptEnv)+` && echo PLANTED && sleep 600`)
	c.Dir = dir
	out, err := c.StdoutPipe()
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	fmt.Println("READY", strings.TrimSpace(line))
	select {}
}

// TestCrashedRunGitDirControlsSwept (F4): moat is killed by SIGKILL after
// its sandbox wrote, in the user's existing repository, .git/commondir
// pointing at a bare repository it made (core.fsmonitor set) and
// .git/info/attributes; in a second place with no repository it made the
// place itself a bare-layout repository. The next New sweeps them, and
// the host's git status runs no payload. Control: right after the kill
// the planted entries are on the host.
func TestCrashedRunGitDirControlsSwept(t *testing.T) {
	isolateState(t)
	need(t, "git")
	m := filepath.Join(t.TempDir(), "PAYLOAD-RAN")
	for _, tc := range []struct {
		name, setup, script string
		planted             []string
	}{
		{"commondir", "git init -q . && rm -rf .git/info",
			`git init -q --bare .cache/x/store && git --git-dir=.cache/x/store config core.bare false && git --git-dir=.cache/x/store config core.fsmonitor "echo COMMONDIR >> ` + m + `" && echo ../.cache/x/store > .git/commondir && mkdir .git/info && echo '* filter=pwn' > .git/info/attributes`,
			[]string{".git/commondir", ".git/info/attributes"}},
		{"bare top", "true",
			`git init -q --bare . && git config core.bare false && git config core.worktree . && git config core.fsmonitor "echo BARETOP >> ` + m + `"`,
			[]string{"config", "HEAD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := docCwd(t)
			if r := hostSh(t, "cd "+d+" && "+tc.setup); r.Code != 0 {
				t.Fatal(r)
			}
			killRoleMidRun(t, "READY PLANTED", 200*time.Millisecond, gitdirCrashRoleEnv+"="+d, gitdirCrashScriptEnv+"="+tc.script)
			for _, p := range tc.planted {
				if !exists(filepath.Join(d, p)) {
					t.Fatalf("control: after the SIGKILL %s is not there, so the test proves nothing: %s", p, snapshot(d))
				}
			}
			sb, err := moat.New(moat.Config{})
			if err != nil {
				t.Fatal(err)
			}
			sb.Close()
			if exists(filepath.Join(d, tc.planted[0])) {
				t.Errorf("%s is still there after the next New: %v", tc.planted[0], sb.Refusals())
			}
			c := exec.Command("git", "status", "--short")
			c.Dir = d
			c.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(d))
			out, _ := c.CombinedOutput()
			if b, err := os.ReadFile(m); err == nil {
				t.Errorf("the host's git status ran the payload: %s\n%s\n%v", b, out, sb.Refusals())
			}
		})
	}
}
