package venv

import (
	"os/exec"
	"syscall"
)

// hostProcess makes cmd, a tool run on the host, end with moat: it leads a
// process group of its own, which cancelling the context kills whole, and
// the kernel kills it when moat dies, even of SIGKILL (PR_SET_PDEATHSIG),
// so that no host step of a venv build outlives the moat that started it.
func hostProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
