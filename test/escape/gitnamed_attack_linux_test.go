//go:build linux

package escape_test

// What an existing repository's config and hooks name in the workdir:
// husky's hooks directory (core.hooksPath=.husky/_), the program of a
// filter (nbstripout's .venv/bin/python), the interpreter a pre-commit
// hook execs, the tracked script a hook links to. The repository's own
// control files are pinned, so the sandbox attacks what they name; then
// the host runs git as the user would, and the payload must not run.
// Control: the same writes made on the host make the same host git run
// the payload.

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat"
)

// payload writes, to file $1 (relative to $W), a shell script that
// creates $M, trying a plain write, then removing the file first, then
// renaming its directory away.
const payload = `put() { f=$1; d=$(dirname "$f"); body=$(printf '#!/bin/sh\ntouch "%s"\ncat\n' "$M");
  { printf '%s\n' "$body" > "$f" && chmod +x "$f"; } 2>/dev/null ||
  { rm -f "$f" && printf '%s\n' "$body" > "$f" && chmod +x "$f"; } 2>/dev/null ||
  { mv "$d" "$d.old" && mkdir -p "$d" && cp -R "$d.old/." "$d/" && rm -f "$f" && printf '%s\n' "$body" > "$f" && chmod +x "$f"; }; }; `

var gitNamedProbes = []struct {
	name  string
	setup string // run on the host in $W, a fresh repository
	// script is what the sandbox (or, for the control, the host) runs in $W.
	script string
	// trigger is the host's git command, run in $W.
	trigger []string
	// reported is the path (relative to $W) New names as control-path.
	reported string
}{
	{
		name:     "husky hooksPath: post-index-change on git status",
		setup:    `git config core.hooksPath .husky/_ && mkdir -p .husky/_ && printf '#!/bin/sh\n' > .husky/_/h`,
		script:   payload + `put .husky/_/post-index-change; touch base.txt; echo x > base.txt; echo base > base.txt; true`,
		trigger:  []string{"status"},
		reported: ".husky",
	},
	{
		name:     "husky hooksPath not yet installed: pre-commit",
		setup:    `git config core.hooksPath .husky/_`,
		script:   payload + `mkdir -p .husky/_; put .husky/_/pre-commit; true`,
		trigger:  []string{"commit", "-q", "--allow-empty", "-m", "x"},
		reported: ".husky",
	},
	{
		name: "filter program in the workdir",
		setup: `mkdir -p .venv/bin && printf '#!/bin/sh\ncat\n' > .venv/bin/tool && chmod +x .venv/bin/tool &&
			git config filter.x.clean "$W/.venv/bin/tool" && echo '*.txt filter=x' > .gitattributes`,
		script:   payload + `put .venv/bin/tool; true`,
		trigger:  []string{"add", "-A"},
		reported: ".venv/bin/tool",
	},
	{
		name: "hook linked to a tracked script",
		setup: `mkdir -p scripts && printf '#!/bin/sh\nexit 0\n' > scripts/pre-commit.sh && chmod +x scripts/pre-commit.sh &&
			ln -s ../../scripts/pre-commit.sh .git/hooks/pre-commit`,
		script:   payload + `put scripts/pre-commit.sh; true`,
		trigger:  []string{"commit", "-q", "--allow-empty", "-m", "x"},
		reported: "scripts/pre-commit.sh",
	},
	{
		name: "pre-commit hook execs the venv's interpreter",
		setup: `mkdir -p .venv/bin && echo 'home = /usr/bin' > .venv/pyvenv.cfg && printf '#!/bin/sh\nexit 0\n' > .venv/bin/python && chmod +x .venv/bin/python &&
			printf '#!/bin/sh\nINSTALL_PYTHON=%s\nexec "$INSTALL_PYTHON" -c x\n' "'$W/.venv/bin/python'" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
		script:   payload + `put .venv/bin/python; true`,
		trigger:  []string{"commit", "-q", "--allow-empty", "-m", "x"},
		reported: ".venv/bin/python",
	},
	{
		name: "filter run by a real venv's python: a .pth in site-packages",
		setup: `python3 -m venv --without-pip .venv &&
			git config filter.x.clean "$W/.venv/bin/python -c 'import sys; sys.stdout.write(sys.stdin.read())'" && echo '*.txt filter=x' > .gitattributes`,
		script:   `for d in .venv/lib/python3*/site-packages; do printf 'import os; open("%s", "a").close()\n' "$M" > "$d/moat-probe.pth"; done; true`,
		trigger:  []string{"add", "-A"},
		reported: ".venv/bin/python",
	},
}

// gitNamedFixture makes the repository of probe i and returns W and M.
func gitNamedFixture(t *testing.T, setup string) (w, m string) {
	w, m = t.TempDir(), filepath.Join(t.TempDir(), "PAYLOAD-RAN")
	newHostRepo(t, w)
	if r := hostSh(t, "export W="+shq(w)+` && cd "$W" && `+setup); r.Err != nil {
		t.Fatalf("setup on the host: %s", r)
	}
	return w, m
}

// gitNamedTrigger changes a tracked file and runs the host's git.
func gitNamedTrigger(t *testing.T, w string, args []string) string {
	writeFile(t, filepath.Join(w, "added.txt"), "added\n")
	return hostGitTry(w, nil, args...)
}

func TestGitNamedPathsPinned(t *testing.T) {
	t.Parallel()
	need(t, "git")
	for _, p := range gitNamedProbes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath("python3"); err != nil && p.reported == ".venv/bin/python" {
				t.Fatalf("python3 is needed for this probe: %v", err)
			}
			w, m := gitNamedFixture(t, p.setup)
			sb, err := moat.New(moat.Config{WorkDir: w})
			if err != nil {
				t.Fatalf("moat.New: %v", err)
			}
			if !refused(sb, "control-path", filepath.Join(w, p.reported)) {
				t.Errorf("New does not report %s as a control path: %v", p.reported, sb.Refusals())
			}
			r := shEnv(t, sb, []string{"W=" + w, "M=" + m}, `echo STARTED; cd "$W" && `+p.script)
			if err := sb.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if !stdoutLine(r, "STARTED") {
				t.Fatalf("the sandbox did not run the probe: %s", r)
			}
			out := gitNamedTrigger(t, w, p.trigger)
			if exists(m) {
				t.Errorf("the host's git ran the sandbox's payload:\nsandbox: %s\nhost git: %s\nrefusals: %v", r, out, sb.Refusals())
			}
		})
	}
}

// Control: the same writes on the host make the host's git run them.
func TestGitNamedPathsPinnedControl(t *testing.T) {
	t.Parallel()
	need(t, "git")
	for _, p := range gitNamedProbes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			w, m := gitNamedFixture(t, p.setup)
			if r := hostSh(t, "export W="+shq(w)+" M="+shq(m)+` && cd "$W" && `+p.script); r.Err != nil {
				t.Fatalf("control: the script fails on the host: %s", r)
			}
			out := gitNamedTrigger(t, w, p.trigger)
			if !exists(m) {
				t.Fatalf("control: the host's git did not run the payload, so the probe detects nothing:\nhost git: %s", out)
			}
		})
	}
}
