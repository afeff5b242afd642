package session

import "sync"

// ring keeps the newest cap bytes written to a stream and counts all of
// them, so that a reader asks by absolute offset. Its memory grows with
// what is written, up to cap, and its cap may be changed (setCap: the
// session's share of output, outbudget.go). The zero value keeps nothing;
// make one with newRing.
type ring struct {
	mu    sync.Mutex
	cap   int
	buf   []byte // the kept bytes, oldest at head; len(buf) <= cap(buf) <= cap
	head  int    // where the oldest kept byte lies; 0 while len(buf) < cap
	total int64  // bytes written, ever
}

func newRing(capacity int) *ring { return &ring{cap: max(capacity, 0)} }

// Write keeps the newest bytes of p; it never fails, so a flood costs no
// more memory than cap.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	r.total += int64(n)
	c := r.cap
	if len(p) > c { // only the last cap bytes can survive
		p = p[len(p)-c:]
	}
	if len(r.buf) < c { // still growing: buf is in order, head 0
		k := min(len(p), c-len(r.buf))
		r.grow(k)
		r.buf = append(r.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // full: overwrite the oldest
		k := copy(r.buf[r.head:], p)
		p = p[k:]
		r.head = (r.head + k) % c
	}
	return n, nil
}

// grow makes room for k more bytes, never past cap: doubling, so that a
// stream written in small pieces is copied a few times only.
func (r *ring) grow(k int) {
	if len(r.buf)+k <= cap(r.buf) {
		return
	}
	nc := min(r.cap, max(2*cap(r.buf), len(r.buf)+k, 512))
	nb := make([]byte, len(r.buf), nc)
	copy(nb, r.buf)
	r.buf = nb
}

// setCap keeps at most c bytes from now on, the newest when fewer than
// are kept survive; the memory beyond them is given back. Offsets and
// Dropped stay exact.
func (r *ring) setCap(c int) {
	c = max(c, 0)
	r.mu.Lock()
	defer r.mu.Unlock()
	if c == r.cap {
		return
	}
	keep := min(len(r.buf), c)
	if keep == len(r.buf) && r.head == 0 && cap(r.buf) <= c {
		r.cap = c // in order, and within the new cap: nothing to move
		return
	}
	nb := make([]byte, keep)
	l := len(r.buf)
	for i := range keep { // the newest keep bytes, oldest first
		nb[i] = r.buf[(r.head+l-keep+i)%l]
	}
	if keep == 0 {
		nb = nil
	}
	r.buf, r.head, r.cap = nb, 0, c
}

// Kept is the memory the ring holds for output, in bytes.
func (r *ring) Kept() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(cap(r.buf))
}

// Read returns what is kept from offset from on: a from before the kept
// window counts the bytes lost as Dropped; one past the end reads nothing.
func (r *ring) Read(from int64) Chunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := len(r.buf)
	start := r.total - int64(l)
	var dropped int64
	switch {
	case from < start:
		dropped = start - max(from, 0)
	case from > r.total:
		start = r.total
	default:
		start = from
	}
	data := make([]byte, 0, r.total-start)
	for o := start; o < r.total; {
		at := (r.head + int(o-(r.total-int64(l)))) % l
		end := min(l, at+int(r.total-o))
		data = append(data, r.buf[at:end]...)
		o += int64(end - at)
	}
	return Chunk{Data: data, Offset: start, Next: r.total, Dropped: dropped}
}

// Total is how many bytes were written, ever.
func (r *ring) Total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}
