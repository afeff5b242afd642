//go:build linux

package escape_test

// The Close scan reads what the sandbox wrote, so the sandbox attacks it:
// a config whose includes loop (finding 7), more names than the scan's
// old single budget (finding 8), hard links of one large file in hooks/
// (finding 9), and control files of tools other than git (issue 22, item
// 5). Each attack is done for real in the sandbox; afterwards the host
// acts as the user would. Controls: the same writes made on the host make
// the host's git run the payload, so the probe detects a real hole.
// The bounds themselves (names, directories, hashed bytes, includes) are
// attacked at and just past each in internal/gitguard's budget_test.go,
// where the bounds can be lowered.

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// closeWithin closes sb and fails the test when that takes longer than d.
func closeWithin(t *testing.T, sb *moat.Sandbox, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := sb.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	took := time.Since(start)
	if took > d {
		t.Errorf("Close took %v, more than %v", took, d)
	}
	return took
}

// cycleScript makes, in sub, a repository whose config includes itself n
// times under a condition git finds false, and sets core.fsmonitor.
func cycleScript(n int) string {
	return fmt.Sprintf(`git init -q sub && i=0 && while [ $i -lt %d ]; do printf '[includeIf "gitdir:/nonexistent-%%s/"]\n\tpath = config\n' $i >> sub/.git/config; i=$((i+1)); done && printf '[core]\n\tfsmonitor = "touch %%s"\n' "$M" >> sub/.git/config && echo PLANTED`, n)
}

// Finding 7: includes that loop back on the config are followed once
// each. Before, 7 such lines made Close take minutes at 100% CPU and left
// the repository in place; and every later New hung the same way.
func TestCloseScanIncludeCycle(t *testing.T) {
	t.Parallel()
	need(t, "git")
	for _, n := range []int{5, 7, 20, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			w, m := t.TempDir(), filepath.Join(t.TempDir(), "PAYLOAD-RAN")
			sb, err := moat.New(moat.Config{WorkDir: w})
			if err != nil {
				t.Fatal(err)
			}
			r := shEnv(t, sb, []string{"M=" + m}, cycleScript(n))
			closeWithin(t, sb, 5*time.Second)
			if !stdoutLine(r, "PLANTED") {
				t.Fatalf("the sandbox did not plant the config: %s", r)
			}
			out := hostGitTry(filepath.Join(w, "sub"), nil, "status")
			if exists(m) {
				t.Errorf("the host's git ran the planted core.fsmonitor: %s\n%v", out, sb.Refusals())
			}
			if quarantinedAt(t, sb.Refusals(), "git-control", filepath.Join(w, "sub/.git/config")) == "" {
				t.Errorf("the planted config is not in the quarantine: %v", sb.Refusals())
			}
			// The next run on that workdir starts at once.
			start := time.Now()
			next, err := moat.New(moat.Config{WorkDir: w})
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the next New took %v", d)
			}
			next.Close()
		})
	}
	t.Run("control: on the host git runs it", func(t *testing.T) {
		t.Parallel()
		w, m := t.TempDir(), filepath.Join(t.TempDir(), "PAYLOAD-RAN")
		if r := hostSh(t, "export M="+shq(m)+" && cd "+shq(w)+" && "+cycleScript(20)); !stdoutLine(r, "PLANTED") {
			t.Fatalf("control: the script fails on the host: %s", r)
		}
		out := hostGitTry(filepath.Join(w, "sub"), nil, "status")
		if !exists(m) {
			t.Fatalf("control: the host's git did not run the payload, so the probe detects nothing: %s", out)
		}
	})
	t.Run("existing repository, included file made a cycle", func(t *testing.T) {
		t.Parallel()
		w, m := t.TempDir(), filepath.Join(t.TempDir(), "PAYLOAD-RAN")
		newHostRepo(t, w)
		hostGit(t, w, "config", "include.path", "../inc.cfg")
		sb, err := moat.New(moat.Config{WorkDir: w})
		if err != nil {
			t.Fatal(err)
		}
		r := shEnv(t, sb, []string{"M=" + m}, `cd "$W" 2>/dev/null; i=0; while [ $i -lt 30 ]; do printf '[includeIf "gitdir:/x%s/"]\n\tpath = inc.cfg\n\tpath = .git/config\n' $i >> inc.cfg; i=$((i+1)); done; printf '[core]\n\tfsmonitor = "touch %s"\n' "$M" >> inc.cfg && echo PLANTED`)
		closeWithin(t, sb, 5*time.Second)
		if !stdoutLine(r, "PLANTED") {
			t.Fatalf("the sandbox did not plant inc.cfg: %s", r)
		}
		out := hostGitTry(w, nil, "status")
		if exists(m) {
			t.Errorf("the host's git ran the planted include: %s\n%v", out, sb.Refusals())
		}
		if exists(filepath.Join(w, "inc.cfg")) {
			t.Errorf("inc.cfg is still in place: %v", sb.Refusals())
		}
	})
}

// linkScript makes n hard links at the top of the workdir, of a new file
// every 60,000 (ext4 allows 65,000 links to one inode), so that they cost
// a handful of inodes, then a repository evil/ with core.fsmonitor and
// a .moat-write fragment.
func linkScript(n int) string {
	return fmt.Sprintf(`python3 -c 'import os
for i in range(%d):
    if i %% 60000 == 0:
        src = "f%%d" %% i
        open(src, "w").close()
    os.link(src, "l%%07d" %% i)
' && git init -q evil && printf '[core]\n\tfsmonitor = "touch %%s"\n' "$M" >> evil/.git/config && printf '/\n' > .moat-write && echo PLANTED`, n)
}

// Finding 8: 200,001 hard links at the top of the workdir used up the
// scan's single 200,000-entry budget, the whole workdir was reported "not
// checked", and a planted evil/.git with core.fsmonitor and a top-level
// .moat-write survived Close. Names now cost only names, with a budget of
// their own (gitguard.MaxEntries), and directories another.
func TestCloseScanManyLinks(t *testing.T) {
	t.Parallel()
	need(t, "git", "python3")
	const n = 200001
	t.Run("sandbox", func(t *testing.T) {
		w, m := t.TempDir(), filepath.Join(t.TempDir(), "PAYLOAD-RAN")
		sb, err := moat.New(moat.Config{WorkDir: w})
		if err != nil {
			t.Fatal(err)
		}
		r := shEnv(t, sb, []string{"M=" + m}, linkScript(n))
		took := closeWithin(t, sb, 30*time.Second)
		t.Logf("Close after %d links: %v", n, took)
		if !stdoutLine(r, "PLANTED") {
			t.Fatalf("the sandbox did not plant: %s", r)
		}
		for _, x := range sb.Refusals() {
			if strings.Contains(x.Detail, "not checked") {
				t.Errorf("part of the workdir was not checked: %v", x)
			}
		}
		out := hostGitTry(filepath.Join(w, "evil"), nil, "status")
		if exists(m) {
			t.Errorf("the host's git ran the planted core.fsmonitor: %s\n%v", out, sb.Refusals())
		}
		if exists(filepath.Join(w, ".moat-write")) {
			t.Errorf(".moat-write survived Close")
		}
		if quarantinedAt(t, sb.Refusals(), "control-path", filepath.Join(w, ".moat-write")) == "" {
			t.Errorf(".moat-write is not in the quarantine: %v", sb.Refusals())
		}
	})
	t.Run("control: on the host git runs it", func(t *testing.T) {
		w, m := t.TempDir(), filepath.Join(t.TempDir(), "PAYLOAD-RAN")
		if r := hostSh(t, "export M="+shq(m)+" && cd "+shq(w)+" && "+linkScript(10)); !stdoutLine(r, "PLANTED") {
			t.Fatalf("control: the script fails on the host: %s", r)
		}
		out := hostGitTry(filepath.Join(w, "evil"), nil, "status")
		if !exists(m) {
			t.Fatalf("control: the host's git did not run the payload: %s", out)
		}
	})
}

// Finding 9: hooks were hashed up to 16 MiB each, with no total and no
// de-duplication by inode: 10,000 hard links of one sparse 16 MiB file
// cost 185 s of host CPU. Now an inode is read once, and the bytes hashed
// have a total bound. Control: hashing that file 10,000 times would take
// far longer than the bound the test sets, so the test can fail.
func TestCloseScanHashLinks(t *testing.T) {
	t.Parallel()
	need(t, "git", "python3")
	const n, size, bound = 10000, 16 << 20, 15 * time.Second
	t.Run("control: hashing each link would exceed the bound", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "sparse")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for i := 0; i < 5; i++ {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			_, _ = io.Copy(h, f)
			f.Close()
		}
		if per := time.Since(start) / 5; per*n < bound {
			t.Fatalf("control: %d hashes of %d bytes take only %v, under the bound of %v", n, size, per*n, bound)
		}
	})
	t.Run("sandbox", func(t *testing.T) {
		w, m := t.TempDir(), filepath.Join(t.TempDir(), "PAYLOAD-RAN")
		sb, err := moat.New(moat.Config{WorkDir: w})
		if err != nil {
			t.Fatal(err)
		}
		r := shEnv(t, sb, []string{"M=" + m}, fmt.Sprintf(`git init -q r && cd r/.git/hooks && python3 -c 'import os
f = open("big", "w"); f.truncate(%d); f.close()
for i in range(%d): os.link("big", "l%%05d" %% i)
' && printf '#!/bin/sh\ntouch "%%s"\n' "$M" > post-checkout && chmod +x post-checkout && echo PLANTED`, size, n))
		took := closeWithin(t, sb, bound)
		t.Logf("Close with %d links of a %d-byte hook: %v", n, size, took)
		if !stdoutLine(r, "PLANTED") {
			t.Fatalf("the sandbox did not plant: %s", r)
		}
		if exists(filepath.Join(w, "r/.git/hooks")) {
			t.Errorf("r/.git/hooks survived Close")
		}
		if !exists(filepath.Join(w, "r/.git/HEAD")) {
			t.Errorf("the repository itself was not kept")
		}
	})
}

// Issue 22, item 5: control files of tools other than git that the run
// makes or changes at the top of the workdir are set aside (they make a
// host tool run code), and files that instruct a host agent are reported
// and left. Control: on the host, the same script leaves them all.
func TestCloseScanControlFiles(t *testing.T) {
	t.Parallel()
	setAside := []string{".envrc", ".mise.toml", ".pre-commit-config.yaml", ".vscode", "x.code-workspace", ".idea",
		".exrc", ".nvim.lua", ".claude", ".cursor", ".codex", ".gemini", ".mcp.json", ".cargo/config.toml", ".npmrc", ".yarnrc.yml",
		".pnpmfile.cjs", ".devcontainer", "moat.toml", ".moat-write", ".heimdall-deny"}
	reported := []string{"AGENTS.md", "CLAUDE.md", ".cursorrules", ".github/copilot-instructions.md"}
	script := "set -e; for f in " + strings.Join(setAside, " ") + " " + strings.Join(reported, " ") +
		`; do mkdir -p "$(dirname "$f")"; echo 'echo payload' > "$f"; done; echo PLANTED`
	w := t.TempDir()
	writeFile(t, filepath.Join(w, "AGENTS.md"), "the user's own\n")
	sb, err := moat.New(moat.Config{WorkDir: w})
	if err != nil {
		t.Fatal(err)
	}
	r := sh(t, sb, script)
	closeWithin(t, sb, 5*time.Second)
	if !stdoutLine(r, "PLANTED") {
		t.Fatalf("the sandbox did not plant: %s", r)
	}
	for _, name := range setAside {
		p := filepath.Join(w, name)
		if exists(p) {
			t.Errorf("%s survived Close", name)
		}
		if quarantinedAt(t, sb.Refusals(), "control-path", p) == "" {
			t.Errorf("%s is not in the quarantine", name)
		}
	}
	for _, name := range reported {
		p := filepath.Join(w, name)
		if !exists(p) {
			t.Errorf("%s was moved; it should be reported and left", name)
		}
		if !refused(sb, "agent-instructions", p) {
			t.Errorf("%s is not reported: %v", name, sb.Refusals())
		}
	}
	t.Run("control: on the host they stay", func(t *testing.T) {
		h := t.TempDir()
		if c := hostSh(t, "cd "+shq(h)+" && "+script); !stdoutLine(c, "PLANTED") {
			t.Fatalf("control: %s", c)
		}
		for _, name := range append(setAside, reported...) {
			if !exists(filepath.Join(h, name)) {
				t.Fatalf("control: %s was not made", name)
			}
		}
	})
}

// Issue 22, item 5: the control files of the table that exist at start
// are pinned for the run (read-only binds, which need the mount
// namespace): the sandbox can neither change nor replace them. Files
// that instruct an agent are not pinned (the sandbox may be asked to edit
// them). Control: in a place where they do not exist yet, the sandbox
// creates them (Close then sets them aside).
func TestControlFilesPinnedAtStart(t *testing.T) {
	t.Parallel()
	pinned := []string{".envrc", ".vscode/tasks.json", ".claude/settings.json", ".mcp.json", ".npmrc", "moat.toml", ".cargo/config.toml", ".devcontainer/devcontainer.json"}
	w := t.TempDir()
	for _, rel := range pinned {
		writeFile(t, filepath.Join(w, rel), "the user's\n")
	}
	writeFile(t, filepath.Join(w, "AGENTS.md"), "the user's\n")
	sb := newSandbox(t, moat.Config{WorkDir: w})
	if !sb.Report().Active("control-paths") {
		t.Fatalf("the control-paths layer is not active: pinning needs the mount namespace (this host should have it): %+v", sb.Report())
	}
	for _, rel := range pinned {
		t.Run(rel, func(t *testing.T) {
			r := sh(t, sb, `echo evil >> `+shq(rel)+` || echo WRITE-FAILED; mv `+shq(rel)+` moved-away 2>/dev/null || echo MOVE-FAILED`)
			if !stdoutLine(r, "WRITE-FAILED") || !stdoutLine(r, "MOVE-FAILED") {
				t.Errorf("the sandbox changed or moved the pinned %s: %s", rel, r)
			}
			if b, _ := os.ReadFile(filepath.Join(w, rel)); string(b) != "the user's\n" {
				t.Errorf("%s now holds %q", rel, b)
			}
		})
	}
	t.Run("AGENTS.md is not pinned", func(t *testing.T) {
		if r := sh(t, sb, `echo more >> AGENTS.md && echo WROTE`); !stdoutLine(r, "WROTE") {
			t.Errorf("AGENTS.md was pinned: %s", r)
		}
	})
	t.Run("control: absent at start, the sandbox creates them", func(t *testing.T) {
		w2 := t.TempDir()
		sb2 := newSandbox(t, moat.Config{WorkDir: w2})
		for _, rel := range pinned {
			if r := sh(t, sb2, `mkdir -p "$(dirname `+shq(rel)+`)" && echo x > `+shq(rel)+` && echo MADE`); !stdoutLine(r, "MADE") {
				t.Fatalf("control: the sandbox could not create %s: %s", rel, r)
			}
		}
	})
}
