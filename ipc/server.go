package ipc

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// ErrServerClosed is what [Server.Serve] returns after [Server.Close].
var ErrServerClosed = errors.New("ipc: server closed")

// DefaultMaxConns is how many connections a [Server] serves at once when
// MaxConns is zero; later ones wait in the listener's backlog.
const DefaultMaxConns = 128

// frameTimeout bounds how long the rest of a frame may take once its
// length has arrived, so a stalled sender holds no connection forever.
const frameTimeout = 30 * time.Second

// Server serves a [Router]'s commands on a listener, one goroutine per
// connection, each connection's requests in order. The zero value is not
// usable: Router must be set.
type Server struct {
	// Router holds the commands served.
	Router *Router
	// SandboxID is given to every handler as Call.SandboxID; empty means
	// none.
	SandboxID string
	// MaxConns bounds the connections served at once; zero means
	// DefaultMaxConns, and each may hold a frame of up to MaxFrameSize.
	MaxConns int

	budget   budget
	mu       sync.Mutex
	ctx      context.Context
	cancel   context.CancelFunc
	listener net.Listener
	conns    map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup
}

func (s *Server) init() {
	if s.ctx == nil {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.conns = map[net.Conn]struct{}{}
	}
}

// Serve accepts connections on l until [Server.Close] and serves them; it
// returns ErrServerClosed after Close, or the listener's error.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	s.init()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listener = l
	ctx := s.ctx
	s.mu.Unlock()

	n := s.MaxConns
	if n <= 0 {
		n = DefaultMaxConns
	}
	slots := make(chan struct{}, n)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ErrServerClosed
		}
		conn, err := l.Accept()
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !s.track(conn) {
			conn.Close()
			return ErrServerClosed
		}
		go func() {
			defer func() { <-slots }()
			defer s.wg.Done()
			defer s.untrack(conn)
			s.serveConn(ctx, conn)
		}()
	}
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Close stops accepting, closes every connection, cancels the contexts of
// running handlers and waits for them to return. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	s.init()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	s.cancel()
	var err error
	if s.listener != nil {
		err = s.listener.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// serveConn answers conn's requests in order until it ends. A frame that
// cannot be read gets an error response: a malformed or empty one, whose
// end is known, and the connection goes on; a truncated or oversized
// one, after which the stream cannot be trusted, and the connection ends.
func (s *Server) serveConn(ctx context.Context, conn net.Conn) {
	peer := peerOf(conn) // callerdir_*.go: held from the start
	if peer != nil {
		defer peer.close()
	}
	br := bufio.NewReader(conn)
	for {
		_ = conn.SetReadDeadline(time.Time{})
		if _, err := br.Peek(1); err != nil {
			return // the client is done (or gone)
		}
		_ = conn.SetReadDeadline(time.Now().Add(frameTimeout))
		n, err := readLength(br)
		release := func() {}
		if err == nil {
			// Bound the memory that frames being read and served hold
			// across all connections; wait for room without a deadline.
			_ = conn.SetReadDeadline(time.Time{})
			if release, err = s.budget.acquire(ctx, min(n*decodeCost, frameBudget)); err != nil {
				return // closing
			}
			_ = conn.SetReadDeadline(time.Now().Add(frameTimeout))
		}
		var body []byte
		if err == nil {
			body, err = readBody(br, n)
		}
		var big frameTooLarge
		switch {
		case err == nil:
		case errors.Is(err, errEmptyFrame):
			s.reply(conn, &response{V: Version, Error: Errorf(CodeBadRequest, "%v", err)})
			continue
		case errors.As(err, &big):
			s.reply(conn, &response{V: Version, Error: Errorf(CodeTooLarge, "%v", err)})
			return
		default:
			release()
			s.reply(conn, &response{V: Version, Error: Errorf(CodeBadRequest, "%v", err)})
			return
		}
		_ = conn.SetReadDeadline(time.Time{})
		ok := s.serveFrame(ctx, conn, body, peer)
		release()
		if !ok {
			return
		}
	}
}

// serveFrame decodes and serves one frame's request and replies; it
// reports whether the connection is still usable.
func (s *Server) serveFrame(ctx context.Context, conn net.Conn, body []byte, peer callerDirOpener) bool {
	req, err := decodeRequest(body)
	if err != nil {
		return s.reply(conn, &response{V: Version, ID: req.ID, Error: Errorf(CodeBadRequest, "%v", err)})
	}
	resp := &response{V: Version, ID: req.ID}
	if s.Router == nil {
		resp.Error = Errorf(CodeUnknownCommand, "unknown command %q: no commands are registered", req.Command)
	} else if result, err := s.Router.dispatch(ctx, &req, s.SandboxID, peer); err != nil {
		resp.Error = asError(err)
	} else {
		resp.Result = result
	}
	return s.reply(conn, resp)
}

// reply writes resp; a response too large to send becomes an error
// response. It reports whether the connection is still usable.
func (s *Server) reply(conn net.Conn, resp *response) bool {
	_ = conn.SetWriteDeadline(time.Now().Add(frameTimeout))
	err := writeFrame(conn, resp)
	var big frameTooLarge
	if errors.As(err, &big) {
		err = writeFrame(conn, &response{V: Version, ID: resp.ID, Error: Errorf(CodeTooLarge, "the response: %v", err)})
	}
	return err == nil
}
