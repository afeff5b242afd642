//go:build unix

package session

import (
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// signals are the signals a client may send, by name.
var signals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL,
	"HUP": syscall.SIGHUP, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
}

// signalGroup sends sig to the process group p leads: the command leads
// its own session, so this reaches its children too.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}

// exitSignal names the signal that ended a process ("KILL"), or "".
func exitSignal(st *os.ProcessState) string {
	if st == nil {
		return ""
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	return strings.TrimPrefix(unix.SignalName(ws.Signal()), "SIG")
}
