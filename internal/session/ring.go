package session

import "sync"

// ring keeps the newest cap bytes written to a stream and counts all of
// them, so that a reader asks by absolute offset. The zero value keeps
// nothing; make one with newRing.
type ring struct {
	mu    sync.Mutex
	buf   []byte // len cap; byte at offset o lies at buf[o%cap]
	total int64  // bytes written, ever
}

func newRing(capacity int) *ring { return &ring{buf: make([]byte, capacity)} }

// Write keeps the newest bytes of p; it never fails, so a flood costs no
// more memory than cap.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	c := len(r.buf)
	if c == 0 {
		r.total += int64(n)
		return n, nil
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
	start := r.total - int64(len(r.buf))
	start = max(start, 0)
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
	c := int64(len(r.buf))
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
