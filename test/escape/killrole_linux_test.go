//go:build linux

package escape_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killRoleMidRun starts this test binary again in a role (env holds the
// role's variables), waits for the role's first line, which must be want
// (the role prints it once its sandbox is running), and kills the role's
// whole process group with SIGKILL, as a crash of moat would. settle is
// how long to wait afterwards for its helpers to die with it.
func killRoleMidRun(t *testing.T, want string, settle time.Duration, env ...string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(settle)
	if strings.TrimSpace(line) != want {
		t.Fatalf("the moat to be killed did not get ready (%q): %q", want, line)
	}
}
