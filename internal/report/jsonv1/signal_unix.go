//go:build unix

package jsonv1

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalName returns sig's name, like "SIGKILL", and number.
func signalName(sig os.Signal) (string, int) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return sig.String(), 0
	}
	if name := unix.SignalName(s); name != "" {
		return name, int(s)
	}
	return sig.String(), int(s)
}
