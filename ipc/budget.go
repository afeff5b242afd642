package ipc

import (
	"context"
	"sync"
)

// frameBudget bounds the bytes of the frames a Server holds at once, all
// connections together, while they are read, decoded and served: what
// sandboxed code can make the host allocate by sending large frames on
// many connections. A frame waits until its bytes fit.
const frameBudget = 4 * MaxFrameSize

// decodeCost is what a frame costs the host per byte while it is served,
// as a multiple of its size: the body, the decoded request (a command line
// of empty words takes 16 bytes of string header per 3 bytes of JSON),
// the arguments' JSON and the handler's typed value. A frame is charged
// that much, up to the whole budget, so a few large frames are served one
// at a time.
const decodeCost = 8

// budget is a weighted semaphore of frameBudget bytes. The zero value is
// empty and ready.
type budget struct {
	mu      sync.Mutex
	used    int
	waiters []chan struct{}
}

// acquire waits until n bytes fit, or ctx ends, and returns the release.
func (b *budget) acquire(ctx context.Context, n int) (func(), error) {
	for {
		b.mu.Lock()
		if b.used+n <= frameBudget {
			b.used += n
			b.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { b.release(n) }) }, nil
		}
		ch := make(chan struct{})
		b.waiters = append(b.waiters, ch)
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release returns n bytes and wakes every waiter to try again.
func (b *budget) release(n int) {
	b.mu.Lock()
	b.used -= n
	w := b.waiters
	b.waiters = nil
	b.mu.Unlock()
	for _, ch := range w {
		close(ch)
	}
}
