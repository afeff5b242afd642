//go:build linux

package escape_test

// Control-path probes: a repository in a writable place (a supplied working
// directory or a WRITE grant) stays usable, but the files that make the
// host run code or change policy later (.git/hooks, .git/config, a .git
// file's gitdir pointer, .moat-policy) cannot be written, and nothing moat
// puts in their place is left behind after Close.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// repoFixture is a git repository the sandbox can write.
type repoFixture struct {
	cfg    moat.Config
	tree   string // the working tree the probes run in
	gitDir string // the common git directory: hooks and config live here
	before map[string]string
	ids    map[string]os.FileInfo
}

// watched are the paths whose state must not change: the git directory's
// configuration and hooks, where a moved-aside git directory would go, and
// the tree's .git when it is a file (a gitdir pointer).
func (f *repoFixture) watched() []string {
	w := []string{
		filepath.Join(f.gitDir, "config"),
		filepath.Join(f.gitDir, "hooks"),
		filepath.Join(f.gitDir, "hooks", "pre-commit"),
		filepath.Join(f.gitDir, "hooks", "post-checkout"),
		f.gitDir + ".moved",
	}
	if dotGit := filepath.Join(f.tree, ".git"); dotGit != f.gitDir {
		w = append(w, dotGit)
	}
	return w
}

// record notes the state of the watched paths and the identity of the git
// directories.
func (f *repoFixture) record(t *testing.T) {
	t.Helper()
	f.before = map[string]string{}
	f.ids = map[string]os.FileInfo{}
	for _, p := range f.watched() {
		f.before[p] = snapshot(p)
	}
	for _, p := range []string{f.gitDir, filepath.Join(f.tree, ".git")} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		f.ids[p] = fi
	}
}

// changed lists what differs from record, or nothing. While the sandbox
// runs (placeholders true), an empty directory or file where nothing was
// is moat's placeholder for a control path that did not exist, which Close
// removes; after Close nothing may differ.
func (f *repoFixture) changed(placeholders bool) []string {
	var out []string
	for _, p := range f.watched() {
		now := snapshot(p)
		if now == f.before[p] {
			continue
		}
		if placeholders && f.before[p] == "<absent>" && (now == "<dir .moat-placeholder>" || strings.HasPrefix(now, "# moat placeholder ")) {
			continue
		}
		out = append(out, p+": "+abbrev(f.before[p])+" -> "+abbrev(now))
	}
	for p, was := range f.ids {
		fi, err := os.Lstat(p)
		if err != nil || !os.SameFile(was, fi) {
			out = append(out, p+": replaced by another object")
		}
	}
	return out
}

func abbrev(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// repoVariants build fresh repositories in writable places.
var repoVariants = []struct {
	name    string
	gitFile bool // the tree's .git is a file naming the git directory
	setup   func(t *testing.T) *repoFixture
}{
	{"supplied workdir", false, func(t *testing.T) *repoFixture {
		w := t.TempDir()
		newHostRepo(t, w)
		return &repoFixture{cfg: moat.Config{WorkDir: w}, tree: w, gitDir: filepath.Join(w, ".git")}
	}},
	{"supplied workdir without hooks dir", false, func(t *testing.T) *repoFixture {
		w := t.TempDir()
		newHostRepo(t, w)
		if err := os.RemoveAll(filepath.Join(w, ".git", "hooks")); err != nil {
			t.Fatal(err)
		}
		return &repoFixture{cfg: moat.Config{WorkDir: w}, tree: w, gitDir: filepath.Join(w, ".git")}
	}},
	{"write grant", false, func(t *testing.T) *repoFixture {
		r := t.TempDir()
		newHostRepo(t, r)
		return &repoFixture{cfg: moat.Config{Grants: []moat.Grant{{Path: r, Access: moat.WRITE}}}, tree: r, gitDir: filepath.Join(r, ".git")}
	}},
	{"default level supplied workdir", false, func(t *testing.T) *repoFixture {
		w := t.TempDir()
		newHostRepo(t, w)
		cfg := levelConfig(moat.IsolationDefault, nil)
		cfg.WorkDir = w
		return &repoFixture{cfg: cfg, tree: w, gitDir: filepath.Join(w, ".git")}
	}},
	{"permissive level supplied workdir", false, func(t *testing.T) *repoFixture {
		w := t.TempDir()
		newHostRepo(t, w)
		cfg := levelConfig(moat.IsolationPermissive, nil)
		cfg.WorkDir = w
		return &repoFixture{cfg: cfg, tree: w, gitDir: filepath.Join(w, ".git")}
	}},
	{".git file to a separate gitdir in the workdir", true, func(t *testing.T) *repoFixture {
		w := t.TempDir()
		g := filepath.Join(w, ".realgit")
		hostGit(t, w, "init", "-q", "-b", "main", "--separate-git-dir="+g)
		hostGit(t, w, "config", "user.name", "Moat Repo")
		hostGit(t, w, "config", "user.email", "repo@example.invalid")
		writeFile(t, filepath.Join(w, "base.txt"), "base\n")
		hostGit(t, w, "add", "base.txt")
		hostGit(t, w, "commit", "-q", "-m", "base")
		return &repoFixture{cfg: moat.Config{WorkDir: w}, tree: w, gitDir: g}
	}},
	{"worktree with its main repository granted writable", true, func(t *testing.T) *repoFixture {
		m := filepath.Join(t.TempDir(), "main")
		if err := os.Mkdir(m, 0o755); err != nil {
			t.Fatal(err)
		}
		newHostRepo(t, m)
		wt := filepath.Join(t.TempDir(), "wt")
		hostGit(t, m, "worktree", "add", "-q", wt)
		return &repoFixture{
			cfg:  moat.Config{WorkDir: wt, Grants: []moat.Grant{{Path: m, Access: moat.WRITE}}},
			tree: wt, gitDir: filepath.Join(m, ".git"),
		}
	}},
}

// gitAttacks try to plant code the host's git would run, or to change the
// repository's configuration. $G is the common git directory, $T the tree.
var gitAttacks = []struct {
	name, script string
	gitFileOnly  bool // needs a .git file (worktree, submodule)
}{
	{"create pre-commit hook", `mkdir -p "$G/hooks"; printf '#!/bin/sh\necho HOOK-RAN\n' > "$G/hooks/pre-commit" && chmod +x "$G/hooks/pre-commit"`, false},
	{"create hook from python", `python3 -c 'import os; p = os.environ["G"] + "/hooks/post-checkout"; os.makedirs(os.path.dirname(p), exist_ok=True); open(p, "w").write("#!/bin/sh\n")'`, false},
	{"swap the hooks dir", `mv "$G/hooks" "$G/hooks.old"; mkdir "$G/hooks"; printf '#!/bin/sh\n' > "$G/hooks/pre-commit"`, false},
	{"git config core.fsmonitor", `git config core.fsmonitor 'echo FSMONITOR-RAN >&2'`, false},
	{"git config core.hooksPath", `git config core.hooksPath /tmp`, false},
	{"append to config", `printf '[core]\n\tfsmonitor = evil\n' >> "$G/config"`, false},
	{"replace config by rename", `cp "$G/config" "$T/config.new" && printf '[core]\n\tfsmonitor = evil\n' >> "$T/config.new" && mv "$T/config.new" "$G/config"`, false},
	{"delete config", `rm -f "$G/config"`, false},
	// A copy of the repository with a hook added, put where the original
	// was: the host's next git command in the tree runs the hook.
	{"move the git dir aside", `mv "$G" "$G.moved" && cp -R "$G.moved" "$G" && printf '#!/bin/sh\necho HOOK-RAN\n' > "$G/hooks/pre-commit" && chmod +x "$G/hooks/pre-commit"`, false},
	{"rewrite the .git file", `printf 'gitdir: /tmp/moat-evil-gitdir\n' > "$T/.git"`, true},
	{"replace the .git file", `rm -f "$T/.git" && mkdir -p "$T/.git/hooks" && printf '#!/bin/sh\n' > "$T/.git/hooks/pre-commit"`, true},
}

func attackEnv(f *repoFixture) []string { return []string{"G=" + f.gitDir, "T=" + f.tree} }

// Git works in a repository in a writable place: objects, refs and the
// index are written (git add, commit, branch), and the host sees the commit.
func TestControlPathsGitStillWorks(t *testing.T) {
	t.Parallel()
	need(t, "git")
	for _, v := range repoVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			f := v.setup(t)
			sb := newSandbox(t, f.cfg)
			r := shEnv(t, sb, attackEnv(f), `set -e
cd "$T"
echo more >> base.txt
echo new > new.txt
git add -A
git commit -q -m sandbox-commit
git branch moat-branch
git status --porcelain | wc -l
git rev-list --count HEAD`)
			if r.Err != nil {
				t.Fatalf("git in a writable repository failed: %s", r)
			}
			if got := commitCount(t, f.tree); got != "2" {
				t.Fatalf("the host sees %s commits, want 2: %s", got, r)
			}
			if !strings.Contains(hostGit(t, f.tree, "branch", "--list", "moat-branch"), "moat-branch") {
				t.Fatalf("the branch the sandbox made is missing on the host: %s", r)
			}
		})
	}
}

// The sandbox cannot plant hooks or change the configuration of a
// repository in a writable place, in any of the variants, and after Close
// nothing moat used to protect them is left in the repository. Controls:
// each attack changes a fresh repository on the host, and a repository the
// sandbox made itself in an automatic working directory.
func TestControlPathsGitProtected(t *testing.T) {
	t.Parallel()
	need(t, "git", "python3")
	for _, a := range gitAttacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			for _, v := range repoVariants {
				if a.gitFileOnly && !v.gitFile {
					continue
				}
				t.Run(v.name, func(t *testing.T) {
					f := v.setup(t)
					f.record(t)
					sb, err := moat.New(f.cfg)
					if err != nil {
						t.Fatalf("moat.New: %v", err)
					}
					r := shEnv(t, sb, attackEnv(f), `cd "$T" && `+a.script)
					during := f.changed(true)
					if err := sb.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
					if len(during) > 0 {
						t.Errorf("the sandbox changed control paths: %s\n%s", strings.Join(during, "\n"), r)
					}
					if after := f.changed(false); len(after) > 0 {
						t.Errorf("after Close the repository differs from before the sandbox: %s", strings.Join(after, "\n"))
					}
				})
			}
			t.Run("control-host", func(t *testing.T) {
				var f *repoFixture
				if a.gitFileOnly {
					f = repoVariants[len(repoVariants)-1].setup(t)
				} else {
					f = repoVariants[0].setup(t)
				}
				f.record(t)
				r := hostSh(t, "export G="+shq(f.gitDir)+" T="+shq(f.tree)+` && cd "$T" && `+a.script)
				if len(f.changed(false)) == 0 {
					t.Fatalf("control: the attack changed nothing on the host, so the probe cannot detect it: %s", r)
				}
			})
			if a.gitFileOnly {
				return
			}
			t.Run("control-auto-workdir", func(t *testing.T) {
				sb := newSandbox(t, moat.Config{})
				wd := sb.WorkDir()
				if r := sh(t, sb, `git init -q -b main . && git -c user.name=a -c user.email=b@example.invalid commit -q --allow-empty -m base`); r.Err != nil {
					t.Fatalf("git init in the automatic working directory: %s", r)
				}
				f := &repoFixture{tree: wd, gitDir: filepath.Join(wd, ".git")}
				f.record(t)
				r := shEnv(t, sb, attackEnv(f), `cd "$T" && `+a.script)
				if len(f.changed(false)) == 0 {
					t.Fatalf("control: in a repository the sandbox made itself, the attack should succeed: %s", r)
				}
			})
		})
	}
}

// A supplied working directory that is not a repository gets no placeholder
// (an empty .git breaks go build), so git init, mkdir .git, a .git file or
// link succeed during the run. Close moves aside what was made, and
// reports it: a .git that is no repository (empty, only hooks/), a .git
// file or link whole; a real repository (git init) keeps its work, with
// its hooks/ and info/ moved to the quarantine and its config cut to its
// inert part (test/workloads' TestGitInitWorkKept holds its history).
// Controls: the same scripts succeed in an automatic working directory
// and on the host.
func TestControlPathsNoNewRepository(t *testing.T) {
	t.Parallel()
	need(t, "git", "python3")
	attacks := []struct{ name, script string }{
		{"git init", `git init -q . && test -f .git/HEAD && git config core.fsmonitor 'touch /tmp/x' && echo ATTACK-OK`},
		{"mkdir .git", `mkdir .git && echo ATTACK-OK`},
		{"mkdir .git/hooks", `mkdir -p .git/hooks && printf '#!/bin/sh\n' > .git/hooks/pre-commit && echo ATTACK-OK`},
		{"python mkdir", `python3 -c 'import os; os.mkdir(".git"); print("ATTACK-OK")'`},
		{".git file", `printf 'gitdir: /tmp/moat-evil-gitdir\n' > .git && echo ATTACK-OK`},
		{".git symlink", `ln -s /tmp/moat-evil-gitdir .git && echo ATTACK-OK`},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			w := t.TempDir()
			writeFile(t, filepath.Join(w, "file.txt"), "not a repository\n")
			before := snapshot(w)
			sb, err := moat.New(moat.Config{WorkDir: w})
			if err != nil {
				t.Fatalf("moat.New: %v", err)
			}
			r := sh(t, sb, a.script)
			if err := sb.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if !stdoutLine(r, "ATTACK-OK") {
				t.Fatalf("control: the script failed in the sandbox, so Close has nothing to find: %s", r)
			}
			if a.name == "git init" {
				g := filepath.Join(w, ".git")
				if !exists(filepath.Join(g, "HEAD")) || exists(filepath.Join(g, "hooks")) || exists(filepath.Join(g, "info")) {
					t.Errorf("after Close the new repository is not kept inert: %s", snapshot(g))
				}
				if b, _ := os.ReadFile(filepath.Join(g, "config")); strings.Contains(string(b), "fsmonitor") {
					t.Errorf("after Close the new repository's config still names core.fsmonitor:\n%s", b)
				}
				for _, c := range []string{"config", "hooks"} {
					if quarantinedAt(t, sb.Refusals(), "git-control", filepath.Join(g, c)) == "" {
						t.Errorf("%s was not moved to the quarantine: %v", c, sb.Refusals())
					}
				}
				if !refused(sb, "git-control", g) {
					t.Errorf("Refusals does not name %s: %v", g, sb.Refusals())
				}
			} else {
				if exists(filepath.Join(w, ".git")) {
					t.Errorf("after Close %s/.git exists: %s", w, snapshot(filepath.Join(w, ".git")))
				}
				if quarantinedAt(t, sb.Refusals(), "git-control", filepath.Join(w, ".git")) == "" || snapshot(w) != before { // controljournal_linux_test.go
					t.Errorf("after Close the working directory is %s (was %s): want the sandbox's .git moved to the quarantine: %v", snapshot(w), before, sb.Refusals())
				}
				if !refused(sb, "git-control", filepath.Join(w, ".git")) {
					t.Errorf("Refusals does not name %s/.git: %v", w, sb.Refusals())
				}
			}
			// Controls.
			if c := sh(t, newSandbox(t, moat.Config{}), a.script); !stdoutLine(c, "ATTACK-OK") {
				t.Fatalf("control: the script fails in an automatic working directory too: %s", c)
			}
			hw := t.TempDir()
			if c := hostSh(t, "cd "+shq(hw)+" && "+a.script); !stdoutLine(c, "ATTACK-OK") {
				t.Fatalf("control: the script fails on the host: %s", c)
			}
		})
	}
	t.Run("no placeholder after a plain run", func(t *testing.T) {
		t.Parallel()
		w := t.TempDir()
		before := snapshot(w)
		sb, err := moat.New(moat.Config{WorkDir: w})
		if err != nil {
			t.Fatal(err)
		}
		r := sh(t, sb, "echo ran")
		if err := sb.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if after := snapshot(w); after != before {
			t.Errorf("a sandbox that only ran echo left %s in the working directory (was %s): %s", after, before, r)
		}
	})
}

// An existing .moat-policy in a writable place cannot be changed, removed
// or replaced. Controls: the same scripts change it on the host and in an
// automatic working directory.
func TestControlPathsMoatPolicy(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	attacks := []struct{ name, script string }{
		{"append", `echo 'allow everything' >> .moat-policy`},
		{"overwrite", `echo 'allow everything' > .moat-policy`},
		{"truncate", `: > .moat-policy`},
		{"remove", `rm -f .moat-policy`},
		{"replace by rename", `echo 'allow everything' > p.new && mv p.new .moat-policy`},
		{"move aside and recreate", `mv .moat-policy p.old; echo 'allow everything' > .moat-policy`},
		{"sed -i", `sed -i 's/^/# /' .moat-policy`},
		{"python", `python3 -c 'open(".moat-policy", "a").write("allow everything\n")'`},
		{"chmod", `chmod 0777 .moat-policy`},
	}
	places := []struct {
		name string
		cfg  func(dir string) moat.Config
	}{
		{"supplied workdir", func(d string) moat.Config { return moat.Config{WorkDir: d} }},
		{"write grant", func(d string) moat.Config { return moat.Config{Grants: []moat.Grant{{Path: d, Access: moat.WRITE}}} }},
		{"permissive supplied workdir", func(d string) moat.Config {
			c := levelConfig(moat.IsolationPermissive, nil)
			c.WorkDir = d
			return c
		}},
	}
	state := func(p string) string {
		fi, err := os.Lstat(p)
		if err != nil {
			return "<absent>"
		}
		return fi.Mode().String() + " " + snapshot(p)
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			for _, pl := range places {
				t.Run(pl.name, func(t *testing.T) {
					d := t.TempDir()
					policy := filepath.Join(d, ".moat-policy")
					writeFile(t, policy, "# moat policy "+randomHex(4)+"\n")
					before := state(policy)
					sb, err := moat.New(pl.cfg(d))
					if err != nil {
						t.Fatalf("moat.New: %v", err)
					}
					r := sh(t, sb, "cd "+shq(d)+" && "+a.script)
					during := state(policy)
					if err := sb.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
					if during != before {
						t.Errorf("the sandbox changed .moat-policy: %q -> %q: %s", before, during, r)
					}
					if after := state(policy); after != before {
						t.Errorf("after Close .moat-policy is %q, was %q", after, before)
					}
				})
			}
			t.Run("control-host", func(t *testing.T) {
				d := t.TempDir()
				policy := filepath.Join(d, ".moat-policy")
				writeFile(t, policy, "# moat policy\n")
				before := state(policy)
				r := hostSh(t, "cd "+shq(d)+" && "+a.script)
				if state(policy) == before {
					t.Fatalf("control: the attack changed nothing on the host: %s", r)
				}
			})
			t.Run("control-auto-workdir", func(t *testing.T) {
				sb := newSandbox(t, moat.Config{})
				policy := filepath.Join(sb.WorkDir(), ".moat-policy")
				if r := sh(t, sb, "echo '# made by the sandbox' > .moat-policy"); r.Err != nil {
					t.Fatalf("control: creating .moat-policy in an automatic working directory failed: %s", r)
				}
				before := state(policy)
				r := sh(t, sb, a.script)
				if state(policy) == before {
					t.Fatalf("control: in an automatic working directory the attack should succeed: %s", r)
				}
			})
		})
	}
}

// refused reports whether sb's refusals hold one of kind about subject.
func refused(sb *moat.Sandbox, kind, subject string) bool {
	return slices.ContainsFunc(sb.Refusals(), func(r moat.Refusal) bool { return r.Kind == kind && r.Subject == subject })
}
