package linux

import (
	"sync"

	"golang.org/x/sys/unix"
)

// The socket guard holds, for every supervised call it carries out, a
// goroutine, the caller's pidfd and socket, a copy of the data and the
// descriptors passed with SCM_RIGHTS. A sandbox that keeps many calls
// blocked (a full peer, a datagram socket nobody reads) would make the
// zygote, which no limit of the sandbox binds, hold all of that. So each
// sandbox has a budget of pending calls, of bytes copied for them and of
// descriptors taken for them. A call past the budget of calls waits,
// unanswered, in a queue of at most maxQueuedCalls notifications (the
// caller blocks, as a blocking connect to a busy server does; nothing is
// copied or opened for it and no goroutine waits for it) and is carried
// out when a call ends; past the queue, and past the bytes or descriptors,
// it fails with EAGAIN, in the sandbox, as a send to a full non-blocking
// socket does. The bytes held are also added to what the memory watch
// counts (memoryUse.helper).
const (
	maxPendingCalls = 64
	maxPendingBytes = 16 << 20
	// maxPendingFDs bounds the descriptors received with SCM_RIGHTS
	// that pending calls hold (one message may carry 253). With the
	// 64 calls' own (pidfd, socket, working directory, socket file),
	// the zygote holds at most 512 descriptors for the sandbox.
	maxPendingFDs = 256
	// maxQueuedCalls bounds the notifications waiting for a call to
	// end: about 100 bytes each.
	maxQueuedCalls = 4096
)

// pendingBudget is what the calls being carried out hold. The zero value
// holds nothing.
type pendingBudget struct {
	mu    sync.Mutex
	calls int
	bytes int64
	fds   int
	queue []queuedCall // calls waiting for one of maxPendingCalls
}

// queuedCall is a notification received but not yet carried out: the
// caller waits.
type queuedCall struct {
	listener int
	inflight *sync.WaitGroup
	n        *seccompNotif
}

// takeCall reserves one call; when none is left, it queues q instead
// (queued) unless the queue is full (neither: the call fails).
func (b *pendingBudget) takeCall(q queuedCall) (taken, queued bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.calls < maxPendingCalls {
		b.calls++
		return true, false
	}
	if len(b.queue) < maxQueuedCalls {
		b.queue = append(b.queue, q)
		return false, true
	}
	return false, false
}

// take reserves calls, bytes and descriptors; false, reserving nothing,
// when that would pass a bound.
func (b *pendingBudget) take(calls int, bytes int64, fds int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.calls+calls > maxPendingCalls || b.bytes+bytes > maxPendingBytes || b.fds+fds > maxPendingFDs {
		return false
	}
	b.calls += calls
	b.bytes += bytes
	b.fds += fds
	return true
}

// give returns what take reserved. When a call is free and one is
// queued, it reserves the call for the first queued one and returns it
// (next), for the caller to carry out.
func (b *pendingBudget) give(calls int, bytes int64, fds int) (next queuedCall, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls -= calls
	b.bytes -= bytes
	b.fds -= fds
	if b.calls < maxPendingCalls && len(b.queue) > 0 {
		next = b.queue[0]
		b.queue[0] = queuedCall{}
		b.queue = b.queue[1:]
		if len(b.queue) == 0 {
			b.queue = nil // let the array go
		}
		b.calls++
		return next, true
	}
	return queuedCall{}, false
}

// heldBytes returns the bytes pending calls hold now.
func (b *pendingBudget) heldBytes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytes
}

// reserve takes bytes and descriptors for call c, given back when it is
// answered; EAGAIN past the budget.
func (c *call) reserve(bytes int64, fds int) unix.Errno {
	if !c.g.budget.take(0, bytes, fds) {
		return unix.EAGAIN
	}
	c.heldBytes += bytes
	c.heldFDs += fds
	return 0
}
