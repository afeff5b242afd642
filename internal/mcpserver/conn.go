package mcpserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/moat-sandbox/moat/internal/session"
)

// conn is one MCP connection's state: its session, made on first use, and
// its Python interpreter, started on the first run_python.
type conn struct {
	srv    *Server
	mu     sync.Mutex
	sess   *session.Session
	py     *interp
	closed bool
}

// session returns the connection's session, creating it on first use.
func (c *conn) session(ctx context.Context) (*session.Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &session.Error{Code: session.CodeClosed, Message: "this connection's session was closed; reconnect to get a new one"}
	}
	if c.sess != nil {
		return c.sess, nil
	}
	s, err := c.srv.opt.Manager.Create(ctx, session.CreateRequest{Policy: c.srv.opt.Policy, Name: "mcp"})
	if err != nil {
		return nil, err
	}
	c.sess = s
	fmt.Fprintf(c.srv.opt.Log, "moat mcp: session %s made (policy %q)\n", s.Info().ID, c.srv.opt.Policy)
	return s, nil
}

// interp returns the connection's Python interpreter, made on first use
// (started on its first call).
func (c *conn) interp(ctx context.Context) (*interp, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.py == nil {
		c.py = &interp{sess: s}
	}
	return c.py, nil
}

// close ends the interpreter and closes the session; once.
func (c *conn) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	s, py := c.sess, c.py
	c.mu.Unlock()
	if py != nil {
		py.stop()
	}
	if s != nil {
		id := s.Info().ID
		if _, err := c.srv.opt.Manager.CloseSession(id); err != nil {
			fmt.Fprintf(c.srv.opt.Log, "moat mcp: session %s: close: %v\n", id, err)
		} else {
			fmt.Fprintf(c.srv.opt.Log, "moat mcp: session %s closed\n", id)
		}
	}
}
