package session

import (
	"os"
	"syscall"
)

// signals are the signals a client may send, by name: Windows has no
// USR1 or USR2.
var signals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL, "HUP": syscall.SIGHUP,
}

// signalGroup sends sig to the process p.
func signalGroup(p *os.Process, sig syscall.Signal) error { return p.Signal(sig) }

// exitSignal is always "" here.
func exitSignal(*os.ProcessState) string { return "" }
