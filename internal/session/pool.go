package session

import (
	"sync"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// warm is a ready sandbox of a policy, un-narrowed, with what Resolve
// opened for it.
type warm struct {
	sb       *moat.Sandbox
	resolved policy.Resolved
}

// close closes w's sandbox and then its audit log.
func (w *warm) close() error {
	err := w.sb.Close()
	if cerr := w.resolved.Close(); err == nil {
		err = cerr
	}
	return err
}

// pool keeps up to size ready sandboxes of one policy, made in the
// background and refilled after each take. The zero value, and nil, keep
// none.
type pool struct {
	size  int
	make  func() (*warm, error)
	log   func(format string, args ...any)
	wake  chan struct{} // a take happened: refill
	quit  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	ready []*warm
}

// newPool starts a pool of size sandboxes made by mk; size <= 0 keeps
// none and starts nothing.
func newPool(size int, mk func() (*warm, error), log func(string, ...any)) *pool {
	if size <= 0 {
		return nil
	}
	p := &pool{size: size, make: mk, log: log, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go p.fill()
	return p
}

// take returns a ready sandbox, or nil when none is ready now.
func (p *pool) take() *warm {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	var w *warm
	if n := len(p.ready); n > 0 {
		w, p.ready = p.ready[n-1], p.ready[:n-1]
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return w
}

// fill makes sandboxes until the pool is full, then waits for a take. A
// failure to make one is logged and waits for the next take, so a broken
// policy does not spin.
func (p *pool) fill() {
	defer close(p.done)
	for {
		for p.count() < p.size {
			select {
			case <-p.quit:
				return
			default:
			}
			w, err := p.make()
			if err != nil {
				p.log("warm pool: %v", err)
				break
			}
			p.mu.Lock()
			p.ready = append(p.ready, w)
			p.mu.Unlock()
		}
		select {
		case <-p.quit:
			return
		case <-p.wake:
		}
	}
}

func (p *pool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

// shutdown stops the filling and closes the ready sandboxes.
func (p *pool) shutdown() {
	if p == nil {
		return
	}
	close(p.quit)
	<-p.done
	p.mu.Lock()
	ready := p.ready
	p.ready = nil
	p.mu.Unlock()
	for _, w := range ready {
		if err := w.close(); err != nil {
			p.log("warm pool: close: %v", err)
		}
	}
}
