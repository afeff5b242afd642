//go:build unix

package cli

import (
	"os/signal"
	"syscall"
)

// withoutTTOU runs f with SIGTTOU ignored, unless it already is: setting a
// terminal's modes from a background process group raises SIGTTOU, whose
// default stops the process; ignored, the call goes through.
func withoutTTOU(f func()) {
	if signal.Ignored(syscall.SIGTTOU) {
		f()
		return
	}
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	f()
}
