//go:build linux

package escape_test

// Lifecycle probes: nothing the sandbox starts outlives its command, its
// sandbox, or moat itself, and exit statuses come through.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// The test binary doubles as a parent process that uses moat, selected by
// MOAT_ESCAPE_PARENT, so a test can kill "moat" itself or give the parent an
// environment of its own. moat's helper role is dispatched by moat's own
// init, which runs before this one, and never sees this variable.
func init() {
	switch os.Getenv("MOAT_ESCAPE_PARENT") {
	case "":
		return
	case "run":
		parentRun()
	case "orphan":
		parentOrphan()
	default:
		fmt.Fprintln(os.Stderr, "unknown MOAT_ESCAPE_PARENT role")
		os.Exit(2)
	}
	os.Exit(0)
}

// parentRun runs MOAT_ESCAPE_SCRIPT in a sandbox, then, after a HOST-BEGIN
// line, unsandboxed, with PARENT_PID set to this process's pid.
func parentRun() {
	script := os.Getenv("MOAT_ESCAPE_SCRIPT")
	pidEnv := fmt.Sprintf("PARENT_PID=%d", os.Getpid())
	sb, err := moat.New(moat.Config{})
	if err != nil {
		fmt.Println("moat.New:", err)
		os.Exit(1)
	}
	c := sb.Command("/bin/sh", "-c", script)
	c.Env = []string{pidEnv}
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		fmt.Println("sandbox run:", err)
	}
	sb.Close()
	fmt.Println("\nHOST-BEGIN")
	h := exec.Command("/bin/sh", "-c", script)
	h.Env = append(os.Environ(), pidEnv)
	h.Stdout, h.Stderr = os.Stdout, os.Stderr
	if err := h.Run(); err != nil {
		fmt.Println("host run:", err)
	}
}

// parentOrphan starts a command in a sandbox that leaves a setsid daemon
// running and, two seconds in, touches "done" in MOAT_ESCAPE_WORKDIR; it
// prints STARTED and then waits to be killed.
func parentOrphan() {
	sb, err := moat.New(moat.Config{WorkDir: os.Getenv("MOAT_ESCAPE_WORKDIR")})
	if err != nil {
		fmt.Println("moat.New:", err)
		os.Exit(1)
	}
	c := sb.Command("/bin/sh", "-c", `(setsid sleep "$M" &); sleep 2; touch done`)
	c.Env = []string{"M=" + os.Getenv("MOAT_ESCAPE_MARKER")}
	if err := c.Start(); err != nil {
		fmt.Println("start:", err)
		os.Exit(1)
	}
	fmt.Println("STARTED")
	go func() {
		fmt.Println("command ended:", c.Wait())
	}()
	for {
		time.Sleep(time.Hour)
	}
}

// waitErr waits for c with a bound, so a test cannot hang on a survivor that
// holds a pipe open.
func waitErr(t *testing.T, c *moat.Cmd, bound time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(bound):
		t.Fatalf("Wait did not return within %v", bound)
		return nil
	}
}

// markers returns n unique sleep arguments and kills whatever is left of
// them when the test ends.
func markers(t *testing.T, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = sleepMarker(300 + i)
		killMarked(t, out[i])
	}
	return out
}

// I12: Close kills every process of the sandbox, daemons included.
func TestLifecycleCloseKillsTree(t *testing.T) {
	t.Parallel()
	m := markers(t, 3)
	sb, err := moat.New(moat.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	c := sb.Command("/bin/sh", "-c", `sleep "$M0" & (setsid sleep "$M1" &); exec sleep "$M2"`)
	c.Env = []string{"M0=" + m[0], "M1=" + m[1], "M2=" + m[2]}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for _, mk := range m {
		mustAppear(t, mk, 5*time.Second) // control: the scan sees them
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, mk := range m {
		mustVanish(t, mk, time.Second, "after Close")
	}
	err = waitErr(t, c, 5*time.Second)
	ee := exitError(t, err)
	if !strings.Contains(ee.Reason(), "closed") {
		t.Errorf("Reason() = %q, want it to say the sandbox was closed", ee.Reason())
	}
}

// I13 and death by signal: the exit status passes through.
func TestLifecycleExitStatus(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	t.Run("exit 42", func(t *testing.T) {
		t.Parallel()
		c := sb.Command("/bin/sh", "-c", "exit 42")
		ee := exitError(t, c.Run())
		if ee.ExitCode() != 42 || ee.StatusCode() != 42 || ee.Signal() != nil || ee.Reason() != "" {
			t.Fatalf("ExitCode %d StatusCode %d Signal %v Reason %q, want 42 42 nil \"\"", ee.ExitCode(), ee.StatusCode(), ee.Signal(), ee.Reason())
		}
		if c.ProcessState == nil || c.ProcessState.ExitCode() != 42 {
			t.Errorf("ProcessState %v, want exit status 42", c.ProcessState)
		}
	})
	t.Run("exit 0", func(t *testing.T) {
		t.Parallel()
		if err := sb.Command("/bin/sh", "-c", "exit 0").Run(); err != nil {
			t.Fatalf("exit 0 gave %v", err)
		}
	})
	t.Run("SIGKILL", func(t *testing.T) {
		t.Parallel()
		ee := exitError(t, sb.Command("/bin/sh", "-c", "kill -KILL $$").Run())
		if ee.Signal() != syscall.SIGKILL || ee.StatusCode() != 137 || ee.ExitCode() != -1 {
			t.Fatalf("Signal %v StatusCode %d ExitCode %d, want killed 137 -1", ee.Signal(), ee.StatusCode(), ee.ExitCode())
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		t.Parallel()
		ee := exitError(t, sb.Command("/bin/sh", "-c", "kill -TERM $$").Run())
		if ee.Signal() != syscall.SIGTERM || ee.StatusCode() != 143 {
			t.Fatalf("Signal %v StatusCode %d, want terminated 143", ee.Signal(), ee.StatusCode())
		}
	})
}

// A background process or a setsid daemon started by the command does not
// survive the command's exit.
func TestLifecycleNoSurvivorsAfterExit(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{})
	tests := []struct{ name, script string }{
		{"background", `sleep "$M" & read x; exit 0`},
		{"nohup", `nohup sleep "$M" >/dev/null 2>&1 & read x; exit 0`},
		{"setsid double fork", `(setsid sleep "$M" &); read x; exit 0`},
		{"python daemon", `python3 -c 'import os, sys
if os.fork(): sys.exit(0)
os.setsid()
if os.fork(): sys.exit(0)
os.execv("/bin/sleep", ["sleep", os.environ["M"]])' & read x; exit 0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := markers(t, 1)[0]
			c := sb.Command("/bin/sh", "-c", tc.script)
			c.Env = []string{"M=" + m}
			stdin, err := c.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			mustAppear(t, m, 5*time.Second) // control: it runs while the command does
			stdin.Close()                   // the command exits
			if err := waitErr(t, c, 10*time.Second); err != nil {
				t.Fatalf("command: %v", err)
			}
			mustVanish(t, m, time.Second, "after the command exited")
		})
	}
}

// Cancelling the context of CommandContext kills the whole tree.
func TestLifecycleContextCancel(t *testing.T) {
	t.Parallel()
	m := markers(t, 3)
	sb := newSandbox(t, moat.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := sb.CommandContext(ctx, "/bin/sh", "-c", `sleep "$M0" & (setsid sleep "$M1" &); sleep "$M2"`)
	c.Env = []string{"M0=" + m[0], "M1=" + m[1], "M2=" + m[2]}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for _, mk := range m {
		mustAppear(t, mk, 5*time.Second)
	}
	cancel()
	if err := waitErr(t, c, 5*time.Second); err == nil {
		t.Errorf("a cancelled command reported success")
	}
	for _, mk := range m {
		mustVanish(t, mk, time.Second, "after the context was cancelled")
	}
	// The sandbox is still usable.
	mustContain(t, sh(t, sb, "echo still-usable"), "still-usable")
}

// Close is idempotent, and a closed sandbox runs nothing.
func TestLifecycleCloseIdempotent(t *testing.T) {
	t.Parallel()
	sb, err := moat.New(moat.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Command("/bin/true").Run(); err != nil {
		t.Fatalf("control: a command before Close failed: %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := sb.Command("/bin/true").Run(); !errors.Is(err, moat.ErrClosed) {
		t.Fatalf("Command after Close: %v, want moat.ErrClosed", err)
	}
	if _, err := sb.Command("/bin/echo", "x").Output(); !errors.Is(err, moat.ErrClosed) {
		t.Fatalf("Output after Close: %v, want moat.ErrClosed", err)
	}
}

// orphanParent is a copy of this test binary in the "orphan" parent role.
type orphanParent struct {
	cmd    *exec.Cmd
	dir    string
	marker string
	lines  chan string
}

func startOrphanParent(t *testing.T) *orphanParent {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &orphanParent{dir: t.TempDir(), marker: markers(t, 1)[0], lines: make(chan string, 16)}
	p.cmd = exec.Command(self)
	p.cmd.Env = append(os.Environ(), "MOAT_ESCAPE_PARENT=orphan", "MOAT_ESCAPE_WORKDIR="+p.dir, "MOAT_ESCAPE_MARKER="+p.marker)
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.cmd.Stdout
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			p.lines <- s.Text()
		}
		_, _ = io.Copy(io.Discard, out)
		close(p.lines)
	}()
	return p
}

func (p *orphanParent) waitLine(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("parent exited before printing %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
			t.Logf("parent: %s", l)
		case <-timeout:
			t.Fatalf("parent did not print %q", want)
		}
	}
}

// L25: SIGKILL of the process using moat leaves no orphan: the daemon dies
// at once and the command never finishes its work. Control: a parent that
// is not killed sees the work done.
func TestLifecycleNoOrphansAfterParentKilled(t *testing.T) {
	t.Parallel()
	victim := startOrphanParent(t)
	control := startOrphanParent(t)
	victim.waitLine(t, "STARTED")
	control.waitLine(t, "STARTED")
	mustAppear(t, victim.marker, 5*time.Second)
	mustAppear(t, control.marker, 5*time.Second)

	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = victim.cmd.Wait()
	// A generous deadline: the figure itself, idle and under load, is
	// BenchmarkKillMoatCleanup's (milliseconds until every process is dead).
	mustVanish(t, victim.marker, 10*time.Second, "after SIGKILL of the parent")

	done := filepath.Join(control.dir, "done")
	deadline := time.Now().Add(10 * time.Second)
	for !exists(done) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !exists(done) {
		t.Fatalf("control: the command of the live parent never touched %s", done)
	}
	time.Sleep(time.Until(killed.Add(3 * time.Second)))
	if exists(filepath.Join(victim.dir, "done")) {
		t.Fatalf("the command kept running after its parent was killed: it touched done")
	}
}
