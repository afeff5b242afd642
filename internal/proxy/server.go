package proxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// Server is a policy proxy. Make one with New; the zero value is not usable.
// A Server may serve several listeners at once and is safe for concurrent
// use.
type Server struct {
	cfg    Config
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{} // client and upstream connections
	clients   int                   // client connections being served, at most cfg.MaxConns
	refusing  int                   // connections being refused past the bound, at most maxRefusing
	wg        sync.WaitGroup        // every goroutine the Server runs, and every Serve
}

// New returns a Server for cfg. It fails only when cfg is invalid (Check is
// nil, a prefix or limit is invalid).
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		cfg:       cfg,
		ctx:       ctx,
		cancel:    cancel,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[net.Conn]struct{}),
	}, nil
}

// Serve accepts connections on l and serves HTTP, CONNECT and SOCKS5 on
// each, until l fails or the Server closes. It always closes l, and returns
// ErrServerClosed after Close.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		l.Close()
	}()

	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			var te interface{ Temporary() bool }
			if errors.As(err, &te) && te.Temporary() {
				// Out of file descriptors, say: wait and retry, as
				// net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(backoff):
				case <-s.ctx.Done():
				}
				continue
			}
			return err
		}
		backoff = 0
		switch s.trackClient(c) {
		case clientClosed:
			return ErrServerClosed
		case clientOverLimit:
			s.refuseConn(c)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrackClient(c)
			s.serveConn(c)
		}()
	}
}

// Close stops every listener, closes every client and upstream connection,
// cancels the context given to Check, Resolver and Dial, and returns once
// every goroutine the Server started (and every Serve) has returned. It is
// idempotent and always returns nil. It must not be called from Check,
// Audit, Resolver or Dial, which it would wait for.
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.cancel()
		for l := range s.listeners {
			l.Close()
		}
		for c := range s.conns {
			c.Close()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// track registers c so that Close closes it. When the Server is already
// closed it closes c and returns false.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// untrack closes c and forgets it.
func (s *Server) untrack(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// goroutine runs f in a goroutine that Close waits for. It must be called
// only from a goroutine Close already waits for.
func (s *Server) goroutine(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// serveConn tells SOCKS5 from HTTP by the first byte and serves c.
func (s *Server) serveConn(c net.Conn) {
	lr := &limitedReader{r: c}
	br := getReader(lr)
	lr.setLimit(int64(s.cfg.MaxHeaderBytes) + int64(br.Size()))
	defer putReader(br)
	c.SetReadDeadline(time.Now().Add(s.cfg.HeaderTimeout))
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		s.serveSOCKS5(c, br, lr)
		return
	}
	s.serveHTTP(c, br, lr)
}
