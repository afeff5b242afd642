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
