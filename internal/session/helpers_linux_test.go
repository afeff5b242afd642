package session

import (
	"context"
	"testing"

	"github.com/moat-sandbox/moat/policy"
)

// testPolicy is moat's library defaults (strict isolation, no network)
// under name, with layers over them.
func testPolicy(t testing.TB, name string, layers ...policy.Layer) Policy {
	t.Helper()
	r, err := policy.Merge(layers...)
	if err != nil {
		t.Fatalf("policy.Merge: %v", err)
	}
	return Policy{Name: name, Source: "test", Result: r}
}

// newManager makes a Manager of opt, with one policy "default" when opt
// names none and no warm pool unless asked, shut down when the test ends.
func newManager(t testing.TB, opt Options) *Manager {
	t.Helper()
	if len(opt.Policies) == 0 {
		opt.Policies = []Policy{testPolicy(t, "default")}
	}
	if opt.WarmPool == 0 {
		opt.WarmPool = -1
	}
	m, err := NewManager(opt)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	t.Cleanup(m.Shutdown)
	return m
}

// newSession makes a session of m's default policy.
func newSession(t testing.TB, m *Manager, req CreateRequest) *Session {
	t.Helper()
	s, err := m.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return s
}
