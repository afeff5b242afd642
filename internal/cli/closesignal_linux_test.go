package cli

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowCloseScript plants a .envrc for Close, or the next run, to set
// aside, and exits.
const slowCloseScript = `echo "echo payload" > .envrc && echo DONE`

// manyDirs makes n*m directories under w: each run there makes Close's
// scan long (each directory opened once, well under the scan's bounds).
// They are made once, before the runs, so that the test pays for making
// and removing them only once.
func manyDirs(t *testing.T, w string, n, m int) {
	t.Helper()
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			if err := os.MkdirAll(filepath.Join(w, "d", strconv.Itoa(i), strconv.Itoa(j)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// startSlowClose runs moat in w with slowCloseScript and returns once the
// command has printed DONE (it exits right after: Close begins).
func startSlowClose(t *testing.T, w, state string) (*exec.Cmd, *bytes.Buffer, time.Time) {
	t.Helper()
	cmd := exec.Command(moatBin, "run", "--workdir", w, "--", "sh", "-c", slowCloseScript)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	cmd.WaitDelay = 10 * time.Second // a process left holding stderr fails the test below
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(5*time.Minute, func() { _ = cmd.Process.Kill() })
	t.Cleanup(func() { watchdog.Stop() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "DONE\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("first line %q, %v; want DONE (stderr %q)", line, err, stderr.String())
	}
	return cmd, &stderr, time.Now()
}

// TestMoatRunSignalDuringClose: once the command has exited, SIGTERM,
// SIGINT and SIGHUP stop moat while Close scans (before, moat caught them
// to forward to a command that was gone, so a Close made to hang could
// not be stopped), and the next run in that working directory finishes
// what Close left: the planted .envrc is moved to the quarantine.
// Control: without a signal, the same Close takes long enough that the
// signal did land in it.
func TestMoatRunSignalDuringClose(t *testing.T) {
	requireSandbox(t)
	w := t.TempDir()
	manyDirs(t, w, 400, 250)
	// A state directory of the test's own: any moat that starts sweeps
	// every dead run's journal in its state directory, and another test's
	// run would otherwise set the killed run's .envrc aside, and report
	// it, before this test's next run could.
	state := t.TempDir()
	var closeTook time.Duration
	t.Run("control: Close takes a while", func(t *testing.T) {
		cmd, stderr, done := startSlowClose(t, w, state)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("moat: %v\n%s", err, stderr)
		}
		closeTook = time.Since(done)
		t.Logf("Close of %s took %v", w, closeTook)
		if closeTook < 400*time.Millisecond {
			t.Fatalf("control: Close took only %v, too short to signal it reliably", closeTook)
		}
		if _, err := os.Lstat(filepath.Join(w, ".envrc")); err == nil {
			t.Errorf("control: Close left the planted .envrc")
		}
	})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			if closeTook == 0 {
				t.Fatal("the control did not run")
			}
			cmd, stderr, done := startSlowClose(t, w, state)
			time.Sleep(closeTook / 10)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			// Under load moat may not have reaped the command yet when
			// the first signal lands, and then forwards it to the
			// command's (gone) group, as it should: the signal is sent
			// again every 50 ms until moat ends, so one lands in Close.
			ended := make(chan struct{})
			go func() {
				tick := time.NewTicker(50 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-ended:
						return
					case <-tick.C:
						_ = cmd.Process.Signal(sig)
					}
				}
			}()
			err := cmd.Wait()
			close(ended)
			t.Logf("signal %v after DONE; moat ended %v later: %v", sent.Sub(done), time.Since(sent), err)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != sig {
				t.Fatalf("moat did not die of %v during Close: %v\n%s", sig, err, stderr)
			}
			if d := time.Since(sent); d > closeTook/2+time.Second {
				t.Errorf("moat took %v to stop after the signal", d)
			}
			// The next run finishes the job, if Close had not set the
			// .envrc aside before the signal landed (under load the scan
			// can reach it first; TestCrashedRunControlNamesSwept in the
			// escape battery holds the sweep whatever the timing).
			_, leftErr := os.Lstat(filepath.Join(w, ".envrc"))
			left := leftErr == nil
			next := exec.Command(moatBin, "run", "--workdir", w, "--", "true")
			next.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
			next.WaitDelay = 10 * time.Second
			out, err := next.CombinedOutput()
			if err != nil {
				t.Fatalf("next run: %v\n%s", err, out)
			}
			if _, err := os.Lstat(filepath.Join(w, ".envrc")); err == nil {
				t.Errorf("the next run left the planted .envrc: %s", out)
			}
			if left && !strings.Contains(string(out), ".envrc") {
				t.Errorf("the next run does not report the .envrc it set aside: %s", out)
			}
			if !left {
				t.Logf("Close had set the .envrc aside before the signal")
			}
		})
	}
}
