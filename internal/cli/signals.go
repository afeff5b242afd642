package cli

import (
	"context"
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

// stopSignals are the forwarded signals that ask a process to end.
var stopSignals = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM}

// stopOn returns a context that is cancelled when one of stopSignals
// reaches moat before done is called, for work moat does itself before the
// command starts (building a venv); the other signals caught meanwhile are
// dropped. done ends the watch, so that forwardTo relays what comes later,
// and returns the signal that cancelled the context, or nil.
func (f *forwarder) stopOn(parent context.Context) (ctx context.Context, done func() os.Signal) {
	ctx, cancel := context.WithCancel(parent)
	quit := make(chan struct{})
	got := make(chan os.Signal, 1)
	go func() {
		defer close(got)
		for {
			select {
			case s := <-f.ch:
				for _, stop := range stopSignals {
					if s == stop {
						got <- s
						cancel()
						return
					}
				}
			case <-quit:
				return
			case <-f.done:
				return
			}
		}
	}()
	return ctx, func() os.Signal {
		close(quit)
		s := <-got
		cancel()
		return s
	}
}

// signalNumber is s's number, for the 128+N exit status.
func signalNumber(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return 0
}

// signalName is s's name as kill(1) spells it, SIGTERM, for stopSignals;
// s.String() otherwise.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}
