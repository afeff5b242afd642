//go:build linux

package escape_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// Build mode (Config.Build) makes the working directory and a private
// scratch directory (GOTMPDIR) executable, and nothing else. These attacks
// write a payload everywhere else the sandbox can write and try to run it;
// the positive controls run the same probes in the places build mode opens,
// where they must succeed, and show that the default refuses them there.

// buildModeLevels are the levels build mode is attacked at.
var buildModeLevels = []struct {
	name string
	iso  moat.Isolation
}{{"strict", moat.IsolationStrict}, {"default", moat.IsolationDefault}}

// probeDir is a fresh directory for one probe under base, a shell
// expression evaluated inside the sandbox ("$HOME", "/tmp").
func probeDir(base, probe string) string {
	return base + "/moat-bm-" + strings.ReplaceAll(probe, " ", "-") + "-" + randomHex(4)
}

// G5 in build mode: what a sandbox writes in its home, its private temp,
// /dev/shm or a WRITE grant still cannot be executed, loaded or mapped
// executable.
func TestBuildModeStillRefusesExec(t *testing.T) {
	t.Parallel()
	need(t, "gcc", "python3")
	for _, lv := range buildModeLevels {
		t.Run(lv.name, func(t *testing.T) {
			t.Parallel()
			wonly := t.TempDir()
			sb := newSandbox(t, moat.Config{
				Isolation: lv.iso,
				Build:     true,
				Grants:    []moat.Grant{{Path: wonly, Access: moat.WRITE}},
			})
			for _, loc := range []struct{ name, base string }{
				{"home", "$HOME"},
				{"tmpdir", "$TMPDIR"},
				{"tmp", "/tmp"},
				{"var-tmp", "/var/tmp"},
				{"dev-shm", "/dev/shm"},
				{"write-grant", wonly},
			} {
				for _, p := range execProbes {
					t.Run(loc.name+"/"+p.name, func(t *testing.T) {
						t.Parallel()
						d := probeDir(loc.base, p.name)
						r := sh(t, sb, `D="`+d+`"; mkdir -p "$D" && `+p.script)
						if !stdoutLine(r, "CREATED") {
							t.Fatalf("the probe could not write its payload into %s, so it proves nothing: %s", loc.name, r)
						}
						if stdoutLine(r, "EXECUTED") {
							t.Fatalf("build mode executed code written into %s: %s", loc.name, r)
						}
					})
				}
			}
		})
	}
}

// Positive control for the test above: the very probes run in the working
// directory and in GOTMPDIR in build mode, and neither runs them without
// it. So the refusals above are build mode's narrowness, not a broken
// probe.
func TestBuildModeControlWorkDirRuns(t *testing.T) {
	t.Parallel()
	need(t, "gcc", "python3")
	for _, lv := range buildModeLevels {
		t.Run(lv.name, func(t *testing.T) {
			t.Parallel()
			build := newSandbox(t, moat.Config{Isolation: lv.iso, Build: true})
			plain := newSandbox(t, moat.Config{Isolation: lv.iso})
			for _, loc := range []struct{ name, base string }{
				{"workdir", "$(pwd)"},
				{"gotmpdir", "$GOTMPDIR"},
			} {
				for _, p := range execProbes {
					t.Run(loc.name+"/"+p.name, func(t *testing.T) {
						t.Parallel()
						d := probeDir(loc.base, p.name)
						r := sh(t, build, `test -n "`+loc.base+`" || { echo "`+loc.base+` is not set" >&2; exit 3; }; D="`+d+`"; mkdir -p "$D" && `+p.script)
						if !stdoutLine(r, "CREATED") || !stdoutLine(r, "EXECUTED") {
							t.Fatalf("control: build mode should run a payload written into %s: %s", loc.name, r)
						}
						if loc.name != "workdir" {
							return
						}
						r = sh(t, plain, `D="`+d+`"; mkdir -p "$D" && `+p.script)
						if !stdoutLine(r, "CREATED") {
							t.Fatalf("the probe could not write its payload without build mode: %s", r)
						}
						if stdoutLine(r, "EXECUTED") {
							t.Fatalf("without build mode code written into the working directory ran: %s", r)
						}
					})
				}
			}
			if r := sh(t, plain, `echo "GOTMPDIR=$GOTMPDIR"`); !stdoutLine(r, "GOTMPDIR=") {
				t.Errorf("GOTMPDIR is set without build mode: %s", r)
			}
		})
	}
}

// Build mode leaves the host's shared temp unexecutable: a program a host
// user left in /tmp is not run by the sandbox, although it is readable at
// the default level. Control: the host runs it.
func TestBuildModeSharedTempNotExecutable(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("/tmp", "bm-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "echo")
	data, err := os.ReadFile("/bin/echo")
	if err != nil {
		t.Fatal(err)
	}
	if err := moattest.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "EXECUTED").Output(); err != nil || strings.TrimSpace(string(out)) != "EXECUTED" {
		t.Fatalf("control: the host cannot run %s: %v %q", bin, err, out)
	}
	sb := newSandbox(t, moat.Config{Isolation: moat.IsolationDefault, Build: true})
	r := sh(t, sb, `"`+bin+`" EXECUTED`)
	if stdoutLine(r, "EXECUTED") {
		t.Fatalf("build mode executed a program from the host's shared temp: %s", r)
	}
}

// Build mode does not reopen control paths: .git/hooks and .git/config of
// the working directory stay read-only, although it is now executable, so
// no hook planted there runs on the user's next git command. Control: the
// host can write them.
func TestBuildModeControlPathsStayReadOnly(t *testing.T) {
	t.Parallel()
	need(t, "git")
	wd := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", wd).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	sb := newSandbox(t, moat.Config{WorkDir: wd, Isolation: moat.IsolationDefault, Build: true})
	for _, probe := range []struct{ name, script string }{
		{"hook", `printf '#!/bin/sh\necho PWNED\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo WROTE`},
		{"config", `printf '[core]\n\thooksPath = /x\n' >> .git/config && echo WROTE`},
	} {
		t.Run(probe.name, func(t *testing.T) {
			r := sh(t, sb, probe.script)
			if stdoutLine(r, "WROTE") {
				t.Fatalf("build mode let the sandbox write a git control path: %s", r)
			}
		})
	}
	c := exec.Command("/bin/sh", "-c", `printf '#!/bin/sh\n' > .git/hooks/moat-control && rm .git/hooks/moat-control`)
	c.Dir = wd
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("control: the host cannot write .git/hooks: %v\n%s", err, out)
	}
}
