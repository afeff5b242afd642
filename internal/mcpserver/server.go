package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moat-sandbox/moat/internal/session"
)

// Options configure a Server. The zero value is unusable: Manager is
// required.
type Options struct {
	// Manager holds the sessions; it serves the one policy of this server.
	Manager *session.Manager
	// Policy is the name of the policy served; empty means the manager's
	// only one.
	Policy string
	// Version is moat's version, shown to clients; empty means "devel".
	Version string
	// Log receives one line per connection event; nil discards.
	Log io.Writer
}

// Server is moat's MCP server: the tools over one policy. The zero value is
// unusable; use New.
type Server struct {
	opt     Options
	allows  session.Summary
	source  string
	mcp     *mcp.Server
	mu      sync.Mutex
	conns   map[*mcp.ServerSession]*conn
	closing bool
}

// New builds the server and its tools, described from the policy's
// settings.
func New(opt Options) (*Server, error) {
	if opt.Manager == nil {
		return nil, errors.New("mcpserver: no session manager")
	}
	if opt.Version == "" {
		opt.Version = "devel"
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	s := &Server{opt: opt, conns: map[*mcp.ServerSession]*conn{}}
	pols := opt.Manager.Policies()
	found := false
	for _, p := range pols {
		if opt.Policy == "" && len(pols) == 1 || p.Name == opt.Policy {
			s.opt.Policy, s.allows, s.source, found = p.Name, p.Allows, p.Source, true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("mcpserver: policy %q: not served by the manager", opt.Policy)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "moat", Title: "moat sandbox", Version: opt.Version}, &mcp.ServerOptions{
		Instructions: instructions(s.allows),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.addTools()
	return s, nil
}

// MCP returns the SDK's server, for a transport to run.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one connection over t (stdio, in memory) until it ends, then
// closes its session.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.Run(ctx, t)
	s.CloseAll()
	return err
}

// CloseAll closes every connection's session and interpreter; later tool
// calls are refused.
func (s *Server) CloseAll() {
	s.mu.Lock()
	s.closing = true
	cs := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		cs = append(cs, c)
	}
	s.conns = map[*mcp.ServerSession]*conn{}
	s.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
}

// connOf returns the state of the connection req came on, made on first
// use; it is closed when the connection ends.
func (s *Server) connOf(req *mcp.CallToolRequest) (*conn, error) {
	ss := req.Session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, &session.Error{Code: session.CodeClosed, Message: "the moat mcp server is shutting down"}
	}
	if c, ok := s.conns[ss]; ok {
		return c, nil
	}
	c := &conn{srv: s}
	s.conns[ss] = c
	if ss != nil {
		go func() {
			_ = ss.Wait()
			s.mu.Lock()
			delete(s.conns, ss)
			s.mu.Unlock()
			c.close()
		}()
	}
	return c, nil
}
