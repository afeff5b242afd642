package moat

import (
	"github.com/moat-sandbox/moat/internal/backend/linux"
	"github.com/moat-sandbox/moat/internal/proxy"
)

// DisableNamespaces makes s run the way it would on a host without user
// namespaces, so tests can attack that path too.
func DisableNamespaces(s *Sandbox) {
	if err := s.backend.(*linux.Engine).DisableNamespaces(); err != nil {
		panic(err)
	}
}

// SetProxyResolver makes sandboxes created from now on resolve names with
// r in their proxy; the returned function restores the host's resolver.
func SetProxyResolver(r proxy.Resolver) (restore func()) {
	testResolver = r
	return func() { testResolver = nil }
}
