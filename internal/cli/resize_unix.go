//go:build !windows

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// onResize calls fn on every SIGWINCH until the returned stop is called.
func onResize(fn func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, syscall.SIGWINCH)
	go func() {
		for {
			select {
			case <-ch:
				fn()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
