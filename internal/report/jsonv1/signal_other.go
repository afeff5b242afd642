//go:build !unix

package jsonv1

import (
	"os"
	"syscall"
)

// signalName returns sig's description and number: this system has no
// signal names to give.
func signalName(sig os.Signal) (string, int) {
	if s, ok := sig.(syscall.Signal); ok {
		return sig.String(), int(s)
	}
	return sig.String(), 0
}
