package session

import "sync"

// capture is one stream of a Run: each write goes to the caller's Output
// as it comes (one call at a time across both streams, through mu) and
// its first max bytes are kept for the result.
type capture struct {
	mu        *sync.Mutex // shared by a Run's two streams
	out       Output
	stream    Stream
	max       int
	kept      []byte
	truncated bool
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out != nil {
		c.out(c.stream, p)
	}
	room := c.max - len(c.kept)
	if room >= len(p) {
		c.kept = append(c.kept, p...)
	} else {
		if room > 0 {
			c.kept = append(c.kept, p[:room]...)
		}
		c.truncated = true
	}
	return len(p), nil
}

// result returns the bytes kept, never nil, and whether more came.
func (c *capture) result() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept == nil {
		return []byte{}, c.truncated
	}
	return c.kept, c.truncated
}
