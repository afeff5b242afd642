//go:build linux

// Package workloads runs real toolchains on real projects in moat
// sandboxes, offline, the way an agent's build-and-test loop does: Go,
// Python with a venv, C with make, npm with a package's bin, and the host's
// PATH. Each runs at the CLI's default level (IsolationDefault) and in build
// mode (Config.Build). Where a step runs a freshly written file, the default
// must refuse it and build mode must allow it; everything else must pass in
// both.
//
// Run it with ./test.sh, which builds this package's test binary and runs it
// as the unprivileged test user, with /usr/local/go/bin and a toolchain
// directory of its own (MOAT_WORKLOADS_TOOL) on PATH. Run as root, the
// package refuses to start unless MOAT_WORKLOADS_AS_ROOT=1, because root is
// not how moat is used and sees other homes.
package workloads_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

func TestMain(m *testing.M) {
	moattest.ExitIfRoot("workloads", "MOAT_WORKLOADS_AS_ROOT")
	os.Exit(m.Run())
}

// modes are the two ways every workload runs.
var modes = []struct {
	name  string
	build bool
}{{"default", false}, {"build", true}}

// offlineEnv keeps every toolchain off the network and away from
// toolchain downloads; the sandbox has no network anyway.
var offlineEnv = []string{
	"GOTOOLCHAIN=local", "GOPROXY=off", "GOSUMDB=off",
	"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1",
	"npm_config_offline=true", "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false",
}

// config is the CLI's default level, offline, with build mode as asked.
func config(workDir string, build bool) moat.Config {
	return moat.Config{
		WorkDir:   workDir,
		Isolation: moat.IsolationDefault,
		Build:     build,
		Env:       moat.Env{Set: offlineEnv},
		Limits:    moat.Limits{Timeout: 10 * time.Minute},
	}
}

// newSandbox creates a sandbox that is closed when the test ends
// (moattest.NewSandbox).
func newSandbox(t *testing.T, cfg moat.Config) *moat.Sandbox {
	t.Helper()
	return moattest.NewSandbox(t, cfg)
}

// result is what a command printed and how it ended.
type result struct {
	Out  string // stdout and stderr together
	Code int    // exit code; -1 when it did not start
	Err  error
}

func (r result) String() string {
	return fmt.Sprintf("code=%d err=%v\n%s", r.Code, r.Err, r.Out)
}

func (r result) ok() bool { return r.Err == nil && r.Code == 0 }

// run runs argv in sb with its working directory dir ("" for the
// sandbox's), collecting output.
func run(t *testing.T, sb *moat.Sandbox, dir string, argv ...string) result {
	t.Helper()
	c := sb.Command(argv[0], argv[1:]...)
	c.Dir = dir
	return runCmd(t, c, strings.Join(argv, " "))
}

// runCmd runs c, collecting its output; label names it in the log.
func runCmd(t *testing.T, c *moat.Cmd, label string) result {
	t.Helper()
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	start := time.Now()
	err := c.Run()
	r := result{Out: out.String(), Err: err}
	var ee *moat.ExitError
	switch {
	case errors.As(err, &ee):
		r.Code = ee.StatusCode()
	case err != nil:
		r.Code = -1
	}
	t.Logf("%s (%.1fs): code %d", label, time.Since(start).Seconds(), r.Code)
	return r
}

// sh runs a shell script in sb's working directory.
func sh(t *testing.T, sb *moat.Sandbox, script string) result {
	t.Helper()
	return run(t, sb, "", "/bin/sh", "-c", script)
}

// mustPass fails the test unless r succeeded.
func mustPass(t *testing.T, what string, r result) {
	t.Helper()
	if !r.ok() {
		t.Fatalf("%s failed: %s", what, r)
	}
}

// wxRefused checks that a step which runs a freshly written file failed the
// way write-xor-execute fails it: with "permission denied" from the tool,
// not some other error.
func wxRefused(t *testing.T, what string, r result) {
	t.Helper()
	if r.ok() {
		t.Fatalf("%s ran a freshly written file without build mode: %s", what, r)
	}
	if !strings.Contains(strings.ToLower(r.Out+fmt.Sprint(r.Err)), "permission denied") {
		t.Fatalf("%s failed, but not with write-xor-execute's \"permission denied\": %s", what, r)
	}
}

// hasRefusal reports whether sb recorded an exec refusal.
func hasExecRefusal(sb *moat.Sandbox) bool {
	for _, r := range sb.Refusals() {
		if r.Kind == "exec" && strings.Contains(r.Allow, "--build") {
			return true
		}
	}
	return false
}

// writeFiles writes name->content under dir; a name ending in "*" is
// written executable, without the star.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "*") {
			name, mode = strings.TrimSuffix(name, "*"), 0o755
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := moattest.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// need fails when a tool is missing: ./test.sh installs every one of
// them (moattest.Need).
func need(t *testing.T, tools ...string) {
	t.Helper()
	moattest.Need(t, tools...)
}

// hostRun runs argv on the host in dir and fails the test if it fails.
func hostRun(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("host: %s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

// gitRepo makes dir a git repository holding its current files, committed.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	hostRun(t, dir, "git", "init", "-q")
	hostRun(t, dir, "git", "add", "-A")
	hostRun(t, dir, "git", "-c", "user.name=moat", "-c", "user.email=moat@example.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init")
}

// porcelain is `git status --porcelain` of dir, as the host sees it.
func porcelain(t *testing.T, dir string) string {
	t.Helper()
	return hostRun(t, dir, "git", "status", "--porcelain", "--untracked-files=all", "--ignored")
}
