package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/session"
)

// tokenKey marks a request's context with whether it carried the token.
type tokenKey struct{}

// connKindKey marks a connection's context with how it reached us.
type connKindKey struct{}

// connKind is how a connection reached the server.
type connKind int

const (
	// kindTCP (the zero value, also for anything unknown): loopback TCP,
	// where the token is always required.
	kindTCP connKind = iota
	// kindUnixUnverified: the Unix socket on a system where the peer's
	// user namespace cannot be checked; the token is always required.
	kindUnixUnverified
	// kindUnixVerified: the Unix socket, from a peer of our uid and user
	// namespace, checked before any request was read.
	kindUnixVerified
)

// ConnContext tags each connection's context with its kind, for
// http.Server.ConnContext.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	k := kindTCP
	if pc, ok := c.(*peerConn); ok {
		k = pc.kind
	}
	return context.WithValue(ctx, connKindKey{}, k)
}

// NewToken returns 32 random bytes in hex.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// authorize decides whether r may be served, and whether it carried the
// token: a wrong token is always refused; TCP and unverified sockets need
// the token; a verified socket needs it while a session without the
// socket guard lives.
func (s *Server) authorize(r *http.Request) (tokenOK bool, err error) {
	kind, _ := r.Context().Value(connKindKey{}).(connKind)
	h := r.Header.Values("Authorization")
	if len(h) > 1 {
		return false, errf(codeUnauthorized, "more than one Authorization header")
	}
	if len(h) == 1 {
		given, ok := strings.CutPrefix(h[0], "Bearer ")
		if !ok || len(s.token) == 0 || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(given)), s.token) != 1 {
			return false, errf(codeUnauthorized, "the bearer token is wrong; read it from the server's token file")
		}
		return true, nil
	}
	switch {
	case kind != kindUnixVerified:
		return false, errf(codeUnauthorized, "this connection needs the bearer token (Authorization: Bearer <token>)")
	case s.guardOffLive():
		return false, errf(codeUnauthorized, "a session without the socket guard (host network or no user namespace) is live: every request needs the bearer token")
	}
	return false, nil
}

// guardOffLive reports whether a session without the socket guard lives,
// or one is being made and not yet classified; it forgets sessions that
// closed.
func (s *Server) guardOffLive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.guardOff {
		if _, err := s.m.Get(id); err != nil {
			delete(s.guardOff, id)
		}
	}
	return len(s.guardOff) > 0
}

// socketGuarded reports whether a sandbox's processes are kept from the
// server's socket by its user namespace and network namespace: false
// under host network or without namespaces.
func socketGuarded(r moat.Report) bool {
	return r.Active("namespaces") && r.Active("network")
}

// classify records a new session's guard; it reports false when the
// session has none and the request did not carry the token, and the
// caller must close it.
func (s *Server) classify(sess *session.Session, tokenOK bool) bool {
	guarded := false
	if sb := sess.Sandbox(); sb != nil {
		guarded = socketGuarded(sb.Report())
	}
	if guarded {
		return true
	}
	if !tokenOK {
		return false
	}
	s.mu.Lock()
	s.guardOff[sess.Info().ID] = true
	s.mu.Unlock()
	return true
}
