package proxy

import (
	"bufio"
	"errors"
	"net"
	"sync"
)

// limitedReader reads from r while n > 0, then fails with
// errHeaderTooLarge and sets reached. A negative n means no limit. It bounds
// the size of request heads and SOCKS5 handshakes.
type limitedReader struct {
	r       net.Conn
	n       int64
	reached bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n == 0 {
		l.reached = true
		return 0, errHeaderTooLarge
	}
	if l.n > 0 && int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	if l.n > 0 {
		l.n -= int64(n)
	}
	return n, err
}

// setLimit bounds the next reads to n bytes (n < 0: no bound).
func (l *limitedReader) setLimit(n int64) { l.n, l.reached = n, false }

var errHeaderTooLarge = errors.New("moat: proxy: request header too large")

// Pools of the 4 KiB buffers of client and upstream connections, so that
// connections that come and go do not each allocate their own.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}
var writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4096) }}

// getReader returns a pooled bufio.Reader reading from r.
func getReader(r interface{ Read([]byte) (int, error) }) *bufio.Reader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// putReader returns br to the pool; it must not be used afterwards.
func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readerPool.Put(br)
}

// getWriter returns a pooled bufio.Writer writing to w.
func getWriter(w interface{ Write([]byte) (int, error) }) *bufio.Writer {
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(w)
	return bw
}

// putWriter returns bw to the pool; it must not be used afterwards.
func putWriter(bw *bufio.Writer) {
	bw.Reset(nil)
	writerPool.Put(bw)
}
