package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/policy"
)

// code is err's *Error code, or "" for none.
func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestPickPolicy(t *testing.T) {
	m := newManager(t, Options{Policies: []Policy{testPolicy(t, "default"), testPolicy(t, "other")}})
	for _, tc := range []struct{ ask, got, code string }{
		{"", "default", ""},
		{"other", "other", ""},
		{"nope", "", CodeUnknownPolicy},
	} {
		s, err := m.Create(context.Background(), CreateRequest{Policy: tc.ask})
		if code(err) != tc.code || (err == nil && s.Info().Policy != tc.got) {
			t.Errorf("policy %q: %v", tc.ask, err)
		}
	}
	if ps := m.Policies(); len(ps) != 2 || ps[0].Name != "default" || ps[0].Allows.Network != "none" {
		t.Errorf("Policies: %+v", ps)
	}
	if _, err := NewManager(Options{Policies: []Policy{testPolicy(t, "Bad Name")}}); code(err) != CodeBadRequest {
		t.Errorf("a bad policy name: %v", err)
	}
}

func TestMaxSessions(t *testing.T) {
	m := newManager(t, Options{MaxSessions: 2})
	a := newSession(t, m, CreateRequest{})
	newSession(t, m, CreateRequest{})
	if _, err := m.Create(context.Background(), CreateRequest{}); code(err) != CodeTooMany {
		t.Fatalf("third session: %v, want too_many_sessions", err)
	}
	if _, err := a.Close(); err != nil {
		t.Fatal(err)
	}
	newSession(t, m, CreateRequest{}) // room again
	if n := len(m.List()); n != 2 {
		t.Errorf("List: %d sessions", n)
	}
}

func TestMemoryBudget(t *testing.T) {
	m := newManager(t, Options{MaxTotalMemory: 2*testMemory + testMemory/2})
	newSession(t, m, CreateRequest{})
	newSession(t, m, CreateRequest{})
	if _, err := m.Create(context.Background(), CreateRequest{}); code(err) != CodeMemoryBudget {
		t.Fatalf("third session: %v, want memory_budget", err)
	}
	// A session that asks for less memory fits in what is left.
	newSession(t, m, CreateRequest{Narrow: Narrowing{Limits: NarrowLimits{MemoryBytes: testMemory / 4}}})
}

// TestDefaultMemoryCounts checks that a policy without a memory limit
// counts moat's default, half the host's memory.
func TestDefaultMemoryCounts(t *testing.T) {
	p := withResult(testPolicy(t, "default"), func(r *policy.Result) { r.Config.Limits.MemoryBytes = 0 })
	m := newManager(t, Options{Policies: []Policy{p}, MaxTotalMemory: memoryOf(0) - 1})
	if _, err := m.Create(context.Background(), CreateRequest{}); code(err) != CodeMemoryBudget {
		t.Fatalf("a default-memory session under a smaller budget: %v", err)
	}
	newSession(t, m, CreateRequest{Narrow: Narrowing{Limits: NarrowLimits{MemoryBytes: testMemory}}})
}

func TestBusyWorkDir(t *testing.T) {
	dir := t.TempDir()
	p := withResult(testPolicy(t, "default"), func(r *policy.Result) { r.WorkDir = dir })
	m := newManager(t, Options{Policies: []Policy{p}, WarmPool: 2})
	a := newSession(t, m, CreateRequest{})
	if a.Info().WorkDir != dir {
		t.Errorf("workdir %q, want %q", a.Info().WorkDir, dir)
	}
	if _, err := m.Create(context.Background(), CreateRequest{}); code(err) != CodeBusy {
		t.Fatalf("second session of a policy with its own workdir: %v, want busy", err)
	}
	if _, err := m.CloseSession(a.ID()); err != nil {
		t.Fatal(err)
	}
	newSession(t, m, CreateRequest{})
}

func TestReapIdle(t *testing.T) {
	m := newManager(t, Options{IdleTimeout: 300 * time.Millisecond})
	idle := newSession(t, m, CreateRequest{})
	busy := newSession(t, m, CreateRequest{})
	// A Run longer than the idle timeout keeps its session.
	res, err := busy.Run(context.Background(), RunRequest{Argv: []string{"sleep", "0.6"}}, nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("a Run past the idle timeout: %+v, %v", res, err)
	}
	waitClosed(t, idle)
	if _, err := m.Get(busy.ID()); err != nil {
		// It was used 0 ms ago; the reaper needs 300 ms more.
		t.Errorf("the session that ran was reaped: %v", err)
	}
	waitClosed(t, busy)
}

func TestReapLifetime(t *testing.T) {
	m := newManager(t, Options{MaxLifetime: 400 * time.Millisecond})
	s := newSession(t, m, CreateRequest{})
	res, err := s.Run(context.Background(), RunRequest{Argv: []string{"sleep", "5"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Signal != "KILL" {
		t.Errorf("a Run past the lifetime ended %+v; want killed", res)
	}
	waitClosed(t, s)
}

// waitClosed waits until the reaper closed s.
func waitClosed(t *testing.T, s *Session) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := s.m.Get(s.ID()); code(err) == CodeNotFound {
			if _, err := s.Run(context.Background(), RunRequest{Argv: []string{"true"}}, nil); code(err) != CodeClosed {
				t.Errorf("Run on a reaped session: %v", err)
			}
			return
		}
	}
	t.Fatalf("session %s was not reaped", s.ID())
}

func TestPool(t *testing.T) {
	m := newManager(t, Options{WarmPool: 1})
	p := m.policies[0].pool
	waitPool(t, p, 1)
	s := newSession(t, m, CreateRequest{})
	waitPool(t, p, 1) // refilled
	res, err := s.Run(context.Background(), RunRequest{Argv: []string{"echo", "ok"}}, nil)
	if err != nil || string(res.Stdout) != "ok\n" {
		t.Errorf("a pooled session: %+v, %v", res, err)
	}
	// A narrowed session is never a pooled one.
	n := newSession(t, m, CreateRequest{Narrow: Narrowing{NoBuild: true}})
	if p.count() != 1 || n.Sandbox() == s.Sandbox() {
		t.Errorf("a narrowed create took from the pool")
	}
	m.Shutdown()
	if p.count() != 0 {
		t.Errorf("Shutdown left %d warm sandboxes", p.count())
	}
	if _, err := m.Create(context.Background(), CreateRequest{}); code(err) != CodeClosed {
		t.Errorf("Create after Shutdown: %v", err)
	}
}

// waitPool waits until p holds n ready sandboxes.
func waitPool(t testing.TB, p *pool, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if p.count() >= n {
			return
		}
	}
	t.Fatalf("the pool never held %d", n)
}
