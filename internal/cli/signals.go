package cli

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// forwardedSignals are the signals moat relays to the sandbox instead of
// dying of them: the command decides what they mean, and moat exits with
// the command's status.
var forwardedSignals = append(append([]os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM}, userSignals...), jobSignals...)

// forwarder catches forwardedSignals from its creation, so none is lost
// while the sandbox starts, and relays them to a process once it runs.
type forwarder struct {
	ch   chan os.Signal
	done chan struct{}
	once sync.Once
}

// catchSignals starts catching forwardedSignals.
func catchSignals() *forwarder {
	f := &forwarder{ch: make(chan os.Signal, 16), done: make(chan struct{})}
	signal.Notify(f.ch, forwardedSignals...)
	return f
}

// forwardTo relays every caught signal, including any caught before, to p's
// process group until stop: the sandboxed command leads its own session, so
// this reaches it and its children the way a terminal's signals would.
func (f *forwarder) forwardTo(p *os.Process) {
	go func() {
		for {
			select {
			case s := <-f.ch:
				_ = signalGroup(p, forwardAs(s)) // fails only once the group is gone, when nothing is left to tell
				afterForward(s)
			case <-f.done:
				return
			}
		}
	}()
}

// stop restores the default handling of the signals. It is idempotent.
func (f *forwarder) stop() {
	f.once.Do(func() {
		signal.Stop(f.ch)
		close(f.done)
	})
}
