package session

import (
	"context"
	"testing"

	"github.com/moat-sandbox/moat/policy"
)

// testMemory is the memory limit of the tests' policies.
const testMemory = 256 << 20

// testPolicy is moat's library defaults (strict isolation, no network)
// under name, with layers over them.
func testPolicy(t testing.TB, name string, layers ...policy.Layer) Policy {
	t.Helper()
	r, err := policy.Merge(layers...)
	if err != nil {
		t.Fatalf("policy.Merge: %v", err)
	}
	if r.Config.Limits.MemoryBytes == 0 {
		// moat's default, half the host's memory, is also the whole
		// default budget of a Manager: one session would fill it.
		r.Config.Limits.MemoryBytes = testMemory
	}
	return Policy{Name: name, Source: "test", Result: r}
}

// withResult is p with its Result changed by f.
func withResult(p Policy, f func(*policy.Result)) Policy {
	f(&p.Result)
	return p
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
