//go:build linux

// Package escape is moat's escape battery: every security guarantee is
// attacked for real, by sandboxed code running as an unprivileged user, and
// every attack has a positive control showing the same probe succeeds when
// the guarantee is lifted.
//
// Run it with ./test.sh, which builds this package's test binary and runs
// it as the unprivileged test user. Run as root, the package refuses to
// start unless MOAT_ESCAPE_AS_ROOT=1, because root passes many probes for
// the wrong reasons.
package escape_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

func TestMain(m *testing.M) {
	runReapRole() // exits when re-executed as TestReapUnderPID1Host's PID-1 host
	moattest.ExitIfRoot("escape battery", "MOAT_ESCAPE_AS_ROOT")
	os.Exit(m.Run())
}

// result is what a probe printed and how it ended.
type result struct {
	Stdout, Stderr string
	Code           int // exit code, or 128+N after signal N
	Err            error
}

func (r result) String() string {
	return fmt.Sprintf("code=%d err=%v\nstdout:\n%s\nstderr:\n%s", r.Code, r.Err, r.Stdout, r.Stderr)
}

// newSandbox creates a sandbox that is closed when the test ends
// (moattest.NewSandbox).
func newSandbox(t *testing.T, cfg moat.Config) *moat.Sandbox {
	t.Helper()
	return moattest.NewSandbox(t, cfg)
}

// inSandbox runs argv in sb and collects its output.
func inSandbox(t *testing.T, sb *moat.Sandbox, argv ...string) result {
	t.Helper()
	c := sb.Command(argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	return toResult(out.String(), errb.String(), err)
}

// onHost runs the same argv with no sandbox: the positive control.
func onHost(t *testing.T, argv ...string) result {
	t.Helper()
	c := exec.Command(argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	return toResult(out.String(), errb.String(), err)
}

func toResult(stdout, stderr string, err error) result {
	r := result{Stdout: stdout, Stderr: stderr, Err: err}
	var me *moat.ExitError
	var ee *exec.ExitError
	switch {
	case errors.As(err, &me):
		r.Code = me.StatusCode()
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Code = 128 + int(ws.Signal())
		}
	case err != nil:
		r.Code = -1
	}
	return r
}

// sh runs a shell script in sb.
func sh(t *testing.T, sb *moat.Sandbox, script string) result {
	t.Helper()
	return inSandbox(t, sb, "/bin/sh", "-c", script)
}

// hostSh runs the same shell script on the host.
func hostSh(t *testing.T, script string) result {
	t.Helper()
	return onHost(t, "/bin/sh", "-c", script)
}

// python runs a Python program in sb.
func python(t *testing.T, sb *moat.Sandbox, program string) result {
	t.Helper()
	return inSandbox(t, sb, "python3", "-c", program)
}

// hostPython runs the same Python program on the host.
func hostPython(t *testing.T, program string) result {
	t.Helper()
	return onHost(t, "/usr/bin/python3", "-c", program)
}

// plant writes a decoy file, creating its directory, and removes what it
// created when the test ends.
func plant(t *testing.T, path, content string) {
	t.Helper()
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	if err := moattest.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
}

// home returns the invoking user's home directory.
func home(t *testing.T) string {
	t.Helper()
	h, err := os.UserHomeDir()
	if err != nil || h == "" || h == "/" {
		t.Fatalf("no usable home directory (%q, %v)", h, err)
	}
	return h
}

// need fails the test loudly when a tool the battery depends on is missing:
// ./test.sh installs all of them, so a missing one is a harness bug.
func need(t *testing.T, tools ...string) {
	t.Helper()
	moattest.Need(t, tools...)
}

// mustContain and mustNotContain check probe output with context.
func mustContain(t *testing.T, r result, want string) {
	t.Helper()
	if !strings.Contains(r.Stdout+r.Stderr, want) {
		t.Fatalf("want %q in output, got %s", want, r)
	}
}

func mustNotContain(t *testing.T, r result, unwanted string) {
	t.Helper()
	if strings.Contains(r.Stdout+r.Stderr, unwanted) {
		t.Fatalf("found %q in output: %s", unwanted, r)
	}
}
