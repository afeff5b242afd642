//go:build unix

package cli

import (
	"os"
	"syscall"
)

// signalGroup sends s to the process group that p leads.
func signalGroup(p *os.Process, s os.Signal) error {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return p.Signal(s)
	}
	return syscall.Kill(-p.Pid, sig)
}

// jobSignals are the terminal's job-control and resize signals. The command
// runs in a session of its own, so the terminal sends them to moat only.
var jobSignals = []os.Signal{syscall.SIGTSTP, syscall.SIGCONT, syscall.SIGWINCH}

// userSignals are SIGUSR1 and SIGUSR2: their meaning is the command's (a log
// reopen, a status dump), so moat relays them instead of dying of them.
var userSignals = []os.Signal{syscall.SIGUSR1, syscall.SIGUSR2}

// forwardAs is the signal the command's group gets for s. SIGTSTP becomes
// SIGSTOP: the group leads a session of its own, an orphaned process group
// to the kernel, which discards SIGTSTP sent to one.
func forwardAs(s os.Signal) os.Signal {
	if s == syscall.SIGTSTP {
		return syscall.SIGSTOP
	}
	return s
}

// afterForward completes what a forwarded signal means for moat itself: on
// Ctrl-Z (SIGTSTP) moat stops too, after the command, so the shell's job
// control sees the job stopped; SIGCONT later resumes both.
func afterForward(s os.Signal) {
	if s == syscall.SIGTSTP {
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	}
}
