//go:build linux

package escape_test

// Git control probes beyond hooks and config: whatever makes the host's
// git read configuration, hooks or programs from elsewhere (commondir,
// includes, config.worktree, worktree pointers, info/attributes, a new
// repository, a .git file to a hidden git directory, a bare working
// directory's hooks). Each probe is written by the sandbox; afterwards the
// host runs git the way a user would, and the payload must not run. What
// the run could create is moved aside by Close and named in Refusals.
// Control: the same writes done on the host make the same host git run
// the payload.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// hostGitTry runs git on the host in dir like hostGit, but returns what
// happened instead of failing: after neutralising, git may well refuse.
func hostGitTry(dir string, env []string, args ...string) string {
	c := exec.Command("git", append([]string{"-C", dir}, args...)...)
	c.Env = append(append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Host", "GIT_AUTHOR_EMAIL=host@example.invalid",
		"GIT_COMMITTER_NAME=Host", "GIT_COMMITTER_EMAIL=host@example.invalid"), env...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	if err != nil {
		return out.String() + " (" + err.Error() + ")"
	}
	return out.String()
}

// gitFixture is one place for a probe: W is the writable place, M the
// marker the payload creates, and trigger what the host does afterwards.
type gitFixture struct {
	W, M    string
	cfg     moat.Config
	trigger func(t *testing.T) string
}

func (f *gitFixture) env() []string { return []string{"W=" + f.W, "M=" + f.M} }

// fsmonitorCfg is a config text whose core.fsmonitor creates $M.
const fsmonitorCfg = `printf '[core]\n\tfsmonitor = "touch %s"\n' "$M"`

var gitControlProbes = []struct {
	name  string
	setup func(t *testing.T, f *gitFixture) // makes W (the repository) and the trigger
	// script is what the sandbox (or, for the control, the host) runs in W.
	script string
	// moved are the paths (relative to W) that Close must have moved aside
	// and named; none when the write must fail during the run already. A
	// repository's config moved aside is replaced by its inert part, so
	// it must be there again, without the payload. A repository the run
	// made keeps its work: only its control paths are named.
	moved []string
}{
	{
		name:   "commondir redirect with core.fsmonitor",
		setup:  repoWithStatus,
		script: `mkdir evil && cp -R .git/objects .git/refs evil/ && ` + fsmonitorCfg + ` > evil/config && printf '../evil\n' > .git/commondir`,
		moved:  []string{".git/commondir"},
	},
	{
		// A HEAD, objects/ and refs/ beside .git make the workdir look
		// like a git directory itself; the check must still walk below it.
		name:   "commondir redirect behind a decoy git directory",
		setup:  repoWithStatus,
		script: `mkdir objects refs && printf 'ref: refs/heads/main\n' > HEAD && mkdir evil && cp -R .git/objects .git/refs evil/ && ` + fsmonitorCfg + ` > evil/config && printf '../evil\n' > .git/commondir`,
		moved:  []string{".git/commondir"},
	},
	{
		name: "repository hidden in a directory made unreadable",
		setup: func(t *testing.T, f *gitFixture) {
			repoWithStatus(t, f)
			f.trigger = func(t *testing.T) string { return hostGitTry(filepath.Join(f.W, "x"), nil, "status") }
			t.Cleanup(func() { _ = os.Chmod(filepath.Join(f.W, "x"), 0o755) }) // before TempDir's removal
		},
		script: `mkdir x && (cd x && git init -q . && ` + fsmonitorCfg + ` >> .git/config) && chmod 311 x`,
		moved:  []string{"x/.git/config"},
	},
	{
		name:   "include.path file created",
		setup:  includes("include.path", "../.gitconfig.local"),
		script: fsmonitorCfg + ` > .gitconfig.local`,
		moved:  []string{".gitconfig.local"},
	},
	{
		name:   "includeIf file created",
		setup:  includes("includeIf.onbranch:main.path", "../.gitconfig.branch"),
		script: fsmonitorCfg + ` > .gitconfig.branch`,
		moved:  []string{".gitconfig.branch"},
	},
	{
		name: "existing include file changed",
		setup: func(t *testing.T, f *gitFixture) {
			repoWithStatus(t, f)
			writeFile(t, filepath.Join(f.W, "shared.gitconfig"), "[user]\n\tname = Shared\n")
			hostGit(t, f.W, "config", "include.path", "../shared.gitconfig")
		},
		script: fsmonitorCfg + ` >> shared.gitconfig`,
	},
	{
		name: "config.worktree created",
		setup: func(t *testing.T, f *gitFixture) {
			repoWithStatus(t, f)
			hostGit(t, f.W, "config", "extensions.worktreeConfig", "true")
		},
		script: fsmonitorCfg + ` > .git/config.worktree`,
		moved:  []string{".git/config.worktree"},
	},
	{
		name: "linked worktree's commondir rewritten",
		setup: func(t *testing.T, f *gitFixture) {
			newHostRepo(t, f.W)
			wt := filepath.Join(t.TempDir(), "wt")
			hostGit(t, f.W, "worktree", "add", "-q", wt)
			f.trigger = func(t *testing.T) string { return hostGitTry(wt, nil, "status") }
		},
		script: `mkdir evil && cp -R .git/objects .git/refs evil/ && ` + fsmonitorCfg + ` > evil/config && printf '%s/evil\n' "$W" > .git/worktrees/wt/commondir`,
	},
	{
		name: "linked worktree's config.worktree created",
		setup: func(t *testing.T, f *gitFixture) {
			newHostRepo(t, f.W)
			hostGit(t, f.W, "config", "extensions.worktreeConfig", "true")
			wt := filepath.Join(t.TempDir(), "wt")
			hostGit(t, f.W, "worktree", "add", "-q", wt)
			f.trigger = func(t *testing.T) string { return hostGitTry(wt, nil, "status") }
		},
		script: fsmonitorCfg + ` > .git/worktrees/wt/config.worktree`,
		moved:  []string{".git/worktrees/wt/config.worktree"},
	},
	{
		name: "new repository in a subdirectory",
		setup: func(t *testing.T, f *gitFixture) {
			f.trigger = func(t *testing.T) string { return hostGitTry(filepath.Join(f.W, "sub"), nil, "status") }
		},
		script: `git init -q sub && ` + fsmonitorCfg + ` >> sub/.git/config`,
		moved:  []string{"sub/.git/config"},
	},
	{
		name: "new repository with a hook, inside an existing one",
		setup: func(t *testing.T, f *gitFixture) {
			newHostRepo(t, f.W)
			f.trigger = func(t *testing.T) string {
				return hostGitTry(filepath.Join(f.W, "vendor/x"), nil, "-c", "user.name=h", "-c", "user.email=h@example.invalid", "commit", "-q", "--allow-empty", "-m", "x")
			}
		},
		script: `git init -q vendor/x && printf '#!/bin/sh\ntouch "%s"\n' "$M" > vendor/x/.git/hooks/pre-commit && chmod +x vendor/x/.git/hooks/pre-commit`,
		moved:  []string{"vendor/x/.git/hooks"},
	},
	{
		name: ".git file to a hidden git dir",
		setup: func(t *testing.T, f *gitFixture) {
			f.trigger = func(t *testing.T) string { return hostGitTry(filepath.Join(f.W, "app"), nil, "status") }
		},
		script: `mkdir app && git init -q --separate-git-dir="$W/.cache-x" app && ` + fsmonitorCfg + ` >> .cache-x/config`,
		moved:  []string{"app/.git", ".cache-x/config"},
	},
	{
		// An interactive rebase stopped at "break" leaves its todo list,
		// whose exec lines git rebase --continue runs on the host.
		name: "rebase todo with an exec line",
		setup: func(t *testing.T, f *gitFixture) {
			newHostRepo(t, f.W)
			f.trigger = func(t *testing.T) string { return hostGitTry(f.W, nil, "rebase", "--continue") }
		},
		script: `GIT_SEQUENCE_EDITOR="printf 'break
exec touch %s
' "$M" >" git -c user.name=s -c user.email=s@example.invalid rebase -i HEAD`,
		moved: []string{".git/rebase-merge"},
	},
	{
		name:   "info/attributes selects a filter driver",
		setup:  filterRepo(true),
		script: `mkdir -p .git/info && printf '* filter=moatx\n' > .git/info/attributes`,
		moved:  []string{".git/info"},
	},
	{
		name:   "info/attributes in an existing info",
		setup:  filterRepo(false),
		script: `printf '* filter=moatx\n' > .git/info/attributes`,
	},
	{
		name:   "bare workdir: hooks/pre-receive",
		setup:  bareWithPush(false),
		script: `printf '#!/bin/sh\ntouch "%s"\n' "$M" > hooks/pre-receive && chmod +x hooks/pre-receive`,
	},
	{
		name:   "bare workdir without hooks: hooks/pre-receive",
		setup:  bareWithPush(true),
		script: `mkdir -p hooks; printf '#!/bin/sh\ntouch "%s"\n' "$M" > hooks/pre-receive && chmod +x hooks/pre-receive`,
	},
	{
		name: "bare repository created in the workdir",
		setup: func(t *testing.T, f *gitFixture) {
			src := t.TempDir()
			newHostRepo(t, src)
			f.trigger = func(t *testing.T) string {
				return hostGitTry(src, nil, "push", "-q", filepath.Join(f.W, "srv.git"), "main")
			}
		},
		script: `git init -q --bare srv.git && printf '#!/bin/sh\ntouch "%s"\n' "$M" > srv.git/hooks/pre-receive && chmod +x srv.git/hooks/pre-receive`,
		moved:  []string{"srv.git/hooks"},
	},
}

// repoWithStatus makes W a repository whose trigger is git status.
func repoWithStatus(t *testing.T, f *gitFixture) {
	newHostRepo(t, f.W)
	f.trigger = func(t *testing.T) string { return hostGitTry(f.W, nil, "status") }
}

// includes makes a repository with status as its trigger whose config
// names, under key, the file at path (relative to .git).
func includes(key, path string) func(t *testing.T, f *gitFixture) {
	return func(t *testing.T, f *gitFixture) {
		repoWithStatus(t, f)
		hostGit(t, f.W, "config", key, path)
	}
}

// filterRepo makes W a repository whose own config defines a filter
// driver that creates M, selected by nothing yet; the trigger adds a file.
// noInfo removes .git/info, so that the sandbox can create it.
func filterRepo(noInfo bool) func(t *testing.T, f *gitFixture) {
	return func(t *testing.T, f *gitFixture) {
		newHostRepo(t, f.W)
		hostGit(t, f.W, "config", "filter.moatx.clean", "touch "+shq(f.M)+"; cat")
		if noInfo {
			if err := os.RemoveAll(filepath.Join(f.W, ".git", "info")); err != nil {
				t.Fatal(err)
			}
		} else {
			writeFile(t, filepath.Join(f.W, ".git", "info", "exclude"), "\n")
		}
		f.trigger = func(t *testing.T) string {
			writeFile(t, filepath.Join(f.W, "added.txt"), "x\n")
			return hostGitTry(f.W, nil, "add", "added.txt")
		}
	}
}

// bareWithPush makes W a bare repository that the host pushes into.
func bareWithPush(noHooks bool) func(t *testing.T, f *gitFixture) {
	return func(t *testing.T, f *gitFixture) {
		hostGit(t, f.W, "init", "-q", "--bare")
		if noHooks {
			if err := os.RemoveAll(filepath.Join(f.W, "hooks")); err != nil {
				t.Fatal(err)
			}
		}
		src := t.TempDir()
		newHostRepo(t, src)
		f.trigger = func(t *testing.T) string { return hostGitTry(src, nil, "push", "-q", f.W, "main") }
	}
}

func newGitFixture(t *testing.T, setup func(*testing.T, *gitFixture)) *gitFixture {
	f := &gitFixture{W: t.TempDir(), M: filepath.Join(t.TempDir(), "PAYLOAD-RAN")}
	f.cfg = moat.Config{WorkDir: f.W}
	setup(t, f)
	return f
}

// The sandbox's writes make the host's git run nothing of the sandbox's;
// what the run created is moved aside and named in Refusals.
func TestGitControlNeutralised(t *testing.T) {
	t.Parallel()
	need(t, "git")
	for _, p := range gitControlProbes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f := newGitFixture(t, p.setup)
			sb, err := moat.New(f.cfg)
			if err != nil {
				t.Fatalf("moat.New: %v", err)
			}
			r := shEnv(t, sb, f.env(), `echo STARTED; cd "$W" && `+p.script)
			if err := sb.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if !stdoutLine(r, "STARTED") {
				t.Fatalf("the sandbox did not run the probe: %s", r)
			}
			out := f.trigger(t)
			if exists(f.M) {
				t.Errorf("the host's git ran the sandbox's payload:\nsandbox: %s\nhost git: %s\nrefusals: %v", r, out, sb.Refusals())
			}
			for _, rel := range p.moved {
				subject := filepath.Join(f.W, rel)
				if !refused(sb, "git-control", subject) {
					t.Errorf("Refusals does not name %s: %v\nsandbox: %s", subject, sb.Refusals(), r)
				}
				if filepath.Base(rel) == "config" {
					if b, _ := os.ReadFile(subject); bytes.Contains(b, []byte("fsmonitor")) {
						t.Errorf("%s still holds the payload after Close:\n%s", subject, b)
					}
				} else if exists(subject) {
					t.Errorf("%s is still there after Close", subject)
				}
				if quarantinedAt(t, sb.Refusals(), "git-control", subject) == "" { // controljournal_linux_test.go
					t.Errorf("%s was not moved to the quarantine of the state directory: %v", rel, sb.Refusals())
				}
			}
			if len(p.moved) == 0 {
				if r.Err == nil {
					t.Errorf("the write should have failed during the run: %s", r)
				}
				for _, x := range sb.Refusals() {
					if x.Kind == "git-control" {
						t.Errorf("nothing should have been left to neutralise: %v", x)
					}
				}
			}
		})
	}
}

// Control: the same writes on the host make the host's git run the payload.
func TestGitControlNeutralisedControl(t *testing.T) {
	t.Parallel()
	need(t, "git")
	for _, p := range gitControlProbes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f := newGitFixture(t, p.setup)
			r := hostSh(t, "export W="+shq(f.W)+" M="+shq(f.M)+` && cd "$W" && `+p.script)
			if r.Err != nil {
				t.Fatalf("control: the script fails on the host: %s", r)
			}
			out := f.trigger(t)
			if !exists(f.M) {
				t.Fatalf("control: the host's git did not run the payload, so the probe detects nothing:\n%s\nhost git: %s", r, out)
			}
		})
	}
}

// go build in a supplied working directory that is not a repository works:
// moat puts no placeholder .git there, which made go's version stamping
// fail. Control: with an empty .git in place, the same build fails so.
func TestGitControlGoBuildWithoutRepository(t *testing.T) {
	t.Parallel()
	const goBin = "/usr/local/go/bin/go"
	if _, err := os.Stat(goBin); err != nil {
		t.Fatalf("%s is needed for this test: %v", goBin, err)
	}
	script := `cd "$W/mod" && HOME="$W/home" GOCACHE="$W/cache" GOTMPDIR="$W/tmp" GOFLAGS= GOTOOLCHAIN=local ` + goBin + ` build -o /dev/null . && echo BUILT`
	prepare := func(t *testing.T) string {
		w := t.TempDir()
		writeFile(t, filepath.Join(w, "mod", "go.mod"), "module example.invalid/m\n\ngo 1.21\n")
		writeFile(t, filepath.Join(w, "mod", "main.go"), "package main\n\nfunc main() {}\n")
		for _, d := range []string{"home", "cache", "tmp"} {
			if err := os.Mkdir(filepath.Join(w, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return w
	}
	t.Run("sandbox", func(t *testing.T) {
		w := prepare(t)
		sb := newSandbox(t, moat.Config{WorkDir: w})
		r := shEnv(t, sb, []string{"W=" + w}, script)
		if !stdoutLine(r, "BUILT") {
			t.Fatalf("go build in a supplied non-repository workdir failed: %s", r)
		}
		if exists(filepath.Join(w, ".git")) {
			t.Errorf("moat put a .git in the working directory")
		}
	})
	t.Run("control: an empty .git breaks it", func(t *testing.T) {
		w := prepare(t)
		if err := os.Mkdir(filepath.Join(w, ".git"), 0o555); err != nil {
			t.Fatal(err)
		}
		r := hostSh(t, "export W="+shq(w)+" && "+script)
		if stdoutLine(r, "BUILT") || !strings.Contains(r.Stderr, "VCS") {
			t.Fatalf("control: go build with an empty .git did not fail on VCS status: %s", r)
		}
	})
}
