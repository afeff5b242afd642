package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// runMoatIn runs moat like runMoat, with env and TMPDIR set to tmp (where
// an automatic working directory would be created), optionally through a
// wrapper such as setpriv.
func runMoatIn(t *testing.T, wrapper []string, tmp string, env []string, args ...string) result {
	t.Helper()
	argv := append(append(append([]string(nil), wrapper...), moatBin), args...)
	return runArgv(t, argv, append([]string{"TMPDIR=" + tmp}, env...))
}

// Bad input exits 2 with one "moat:" line naming the flag, and leaves
// nothing behind: no automatic working directory, no audit log file.
// Covers issue 9 item 7 (workdir /, /proc, /root as another user, grant
// of /, too few open files, a missing grant), issue 8 item 8 (a workdir
// that is or holds a home, ~/.local/bin or a PATH directory) and item 10
// (an audit log the sandbox could write). Controls: the same shapes that
// are allowed (--allow-home-workdir, --open-files 32, an audit log outside
// every writable place) run.
func TestMoatRunBadInputs(t *testing.T) {
	base := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fakeHome := mk("home/u")
	mk("home/u/.local/bin")
	mk("home/u/.config")
	work := mk("work")
	grantRW := mk("grant-rw")
	grantR := mk("grant-r")
	outside := mk("outside")
	pathDir := mk("tools/bin")
	if err := os.Symlink(work, filepath.Join(base, "link-to-work")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(work, "audit.jsonl"), filepath.Join(outside, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	homeEnv := []string{"HOME=" + fakeHome}
	nobody := []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}
	if os.Geteuid() != 0 {
		nobody = nil
	}
	allowAll := []string{"--network", "allow-all"}
	tests := []struct {
		name    string
		wrapper []string
		env     []string
		args    []string
		mention []string
		noFile  string // a path that must not exist afterwards
		sandbox bool   // the case runs a sandbox: needs one
		code    int    // 0 means 2
	}{
		{name: "workdir is the root", args: []string{"--workdir", "/"}, mention: []string{"--workdir", `"/"`, "root directory"}},
		{name: "workdir is /proc", args: []string{"--workdir", "/proc"}, mention: []string{"--workdir", "/proc"}},
		{name: "workdir in /proc", args: []string{"--workdir", "/proc/self"}, mention: []string{"--workdir", "/proc"}},
		{name: "workdir is /sys", args: []string{"--workdir", "/sys"}, mention: []string{"--workdir", "/sys"}},
		{name: "workdir is /dev", args: []string{"--workdir", "/dev"}, mention: []string{"--workdir", "/dev"}},
		{name: "workdir is /tmp", args: []string{"--workdir", "/tmp"}, mention: []string{"--workdir", "/tmp"}},
		{name: "workdir is /etc", args: []string{"--workdir", "/etc"}, mention: []string{"--workdir", "/etc"}},
		{name: "workdir is the home", env: homeEnv, args: []string{"--workdir", fakeHome}, mention: []string{"--workdir", "--allow-home-workdir"}},
		{name: "workdir holds the home", env: homeEnv, args: []string{"--workdir", filepath.Dir(fakeHome)}, mention: []string{"--workdir", "--allow-home-workdir"}},
		{name: "workdir is ~/.local/bin", env: homeEnv, args: []string{"--workdir", filepath.Join(fakeHome, ".local/bin")}, mention: []string{"--workdir", ".local/bin", "--allow-home-workdir"}},
		{name: "workdir is ~/.local", env: homeEnv, args: []string{"--workdir", filepath.Join(fakeHome, ".local")}, mention: []string{"--workdir", "--allow-home-workdir"}},
		{name: "workdir is ~/.config", env: homeEnv, args: []string{"--workdir", filepath.Join(fakeHome, ".config")}, mention: []string{"--workdir", "--allow-home-workdir"}},
		{name: "workdir holds a PATH directory", env: []string{"PATH=" + pathDir + ":/usr/bin:/bin"}, args: []string{"--workdir", filepath.Dir(pathDir)}, mention: []string{"--workdir", "PATH", "--allow-home-workdir"}},
		{name: "workdir the user cannot open", wrapper: nobody, env: []string{"HOME=/nonexistent"}, args: []string{"--workdir", "/root"}, mention: []string{"--workdir", `"/root"`}},
		{name: "grant of the root rwx", args: []string{"--grant", "/=rwx"}, mention: []string{"--grant", `"/"`, "root directory"}},
		{name: "grant of the root r", args: []string{"--grant", "/=r"}, mention: []string{"--grant", "root directory"}},
		{name: "readable root", args: []string{"--readable", "/"}, mention: []string{"--grant", "root directory"}},
		{name: "grant of the root through a link", args: []string{"--grant", "/proc/self/root=r"}, mention: []string{"--grant", "root directory"}},
		{name: "missing grant", args: []string{"--grant", "/nonexistent-moat-test=r"}, mention: []string{"--grant", "/nonexistent-moat-test"}},
		{name: "too few open files", args: []string{"--open-files", "3"}, mention: []string{"--open-files", "3", "32"}},
		{name: "open files just below the minimum", args: []string{"--open-files", "31"}, mention: []string{"--open-files", "31"}},
		{name: "audit log in the workdir", args: append([]string{"--workdir", work, "--audit-log", filepath.Join(work, "audit.jsonl")}, allowAll...),
			mention: []string{"--audit-log", "working directory"}, noFile: filepath.Join(work, "audit.jsonl")},
		{name: "audit log in a writable grant", args: append([]string{"--writable", grantRW, "--audit-log", filepath.Join(grantRW, "a.jsonl")}, allowAll...),
			mention: []string{"--audit-log", "writable grant"}, noFile: filepath.Join(grantRW, "a.jsonl")},
		{name: "audit log through a link to the workdir", args: append([]string{"--workdir", work, "--audit-log", filepath.Join(base, "link-to-work", "b.jsonl")}, allowAll...),
			mention: []string{"--audit-log", "working directory"}, noFile: filepath.Join(work, "b.jsonl")},
		{name: "audit log that is a link into the workdir", args: append([]string{"--workdir", work, "--audit-log", filepath.Join(outside, "link.jsonl")}, allowAll...),
			mention: []string{"--audit-log", "working directory"}, noFile: filepath.Join(work, "audit.jsonl")},
		{name: "daily audit log directory is the workdir", args: append([]string{"--workdir", work, "--audit-log", work, "--audit-rotate", "daily"}, allowAll...),
			mention: []string{"--audit-log", "working directory"}},
		{name: "audit log at permissive", args: append([]string{"--isolation", "permissive", "--audit-log", filepath.Join(outside, "p.jsonl")}, allowAll...),
			mention: []string{"--audit-log", "permissive"}, noFile: filepath.Join(outside, "p.jsonl")},
		// Controls: what is allowed runs.
		{name: "control: allow-home-workdir", env: homeEnv, args: []string{"--allow-home-workdir", "--workdir", fakeHome}, sandbox: true, code: -1},
		// What New refuses of the resolved places is refused before the
		// missing working directory is made (outside review, finding 7).
		{name: "home is the missing workdir", args: []string{"--workdir", filepath.Join(base, "new-a"), "--home", filepath.Join(base, "new-a")}, mention: []string{"--home", "overlaps the working directory", "--home (Config.Home)"}, noFile: filepath.Join(base, "new-a")},
		{name: "missing workdir in moat's state directory", env: []string{"XDG_STATE_HOME=" + filepath.Join(base, "state")}, args: []string{"--workdir", filepath.Join(base, "state", "moat", "x")}, mention: []string{"--workdir", "moat's state directory"}, noFile: filepath.Join(base, "state", "moat", "x")},
		{name: "grant of moat's state directory", env: []string{"XDG_STATE_HOME=" + filepath.Join(base, "state")}, args: []string{"--workdir", filepath.Join(base, "new-c"), "--grant", filepath.Join(base, "state", "moat") + "=r"}, mention: []string{"--grant", "moat's state directory"}, noFile: filepath.Join(base, "new-c")},
		{name: "control: 32 open files", args: []string{"--open-files", "32"}, sandbox: true, code: -1},
		{name: "control: audit log beside a read-only grant", args: append([]string{"--workdir", work, "--readable", grantR, "--audit-log", filepath.Join(grantR, "ok.jsonl")}, allowAll...), sandbox: true, code: -1},
		{name: "control: workdir in the home", env: homeEnv, args: []string{"--workdir", mk("home/u/proj")}, sandbox: true, code: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.sandbox {
				requireSandbox(t)
			}
			if tt.name == "workdir the user cannot open" && tt.wrapper == nil {
				t.Log("not root: /root is probed as the test's own user")
			}
			tmp := t.TempDir()
			if tt.wrapper != nil {
				os.Chmod(tmp, 0o777)
			}
			args := append(append([]string{"run"}, tt.args...), "--", "true")
			r := runMoatIn(t, tt.wrapper, tmp, tt.env, args...)
			if tt.code == -1 {
				if r.code != 0 {
					t.Fatalf("control: exit %d, stderr %q; want 0", r.code, r.stderr)
				}
				return
			}
			for _, e := range []expect{exits(2), stdoutIs(""), oneMoatLine(tt.mention...)} {
				if p := e(r); p != "" {
					t.Error(p)
				}
			}
			if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
				t.Errorf("a refused run left %s in TMPDIR", ents[0].Name())
			}
			if tt.noFile != "" {
				if _, err := os.Lstat(tt.noFile); err == nil {
					t.Errorf("a refused run created %s", tt.noFile)
				}
			}
		})
	}
}
