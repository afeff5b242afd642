package session

import "sync"

// ring keeps the newest cap bytes written to a stream and counts all of
// them, so that a reader asks by absolute offset. Its memory grows with
// what is written, up to cap. The zero value keeps nothing; make one with
// newRing.
type ring struct {
	mu    sync.Mutex
	cap   int
	buf   []byte // at most cap; the byte at offset o lies at buf[o%cap]
	total int64  // bytes written, ever
}

func newRing(capacity int) *ring { return &ring{cap: capacity} }

// Write keeps the newest bytes of p; it never fails, so a flood costs no
// more memory than cap.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	c := r.cap
	if c == 0 {
		r.total += int64(n)
		return n, nil
	}
	if len(r.buf) < c { // still growing: buf holds offsets 0 to total
		k := min(len(p), c-len(r.buf))
		r.buf = append(r.buf, p[:k]...)
		r.total += int64(k)
		p = p[k:]
	}
	if len(p) > c { // only the last cap bytes can survive
		r.total += int64(len(p) - c)
		p = p[len(p)-c:]
	}
	for len(p) > 0 {
		at := int(r.total % int64(c))
		k := copy(r.buf[at:], p)
		p = p[k:]
		r.total += int64(k)
	}
	return n, nil
}

// Read returns what is kept from offset from on: a from before the kept
// window counts the bytes lost as Dropped; one past the end reads nothing.
func (r *ring) Read(from int64) Chunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.total - int64(len(r.buf)) // len(buf) is min(total, cap)
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
	c := int64(max(r.cap, 1))
	for o := start; o < r.total; {
		at := o % c
		end := min(c, at+(r.total-o))
		data = append(data, r.buf[at:end]...)
		o += end - at
	}
	return Chunk{Data: data, Offset: start, Next: r.total, Dropped: dropped}
}

// Total is how many bytes were written, ever.
func (r *ring) Total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}
