package session

import (
	"context"
	"errors"
	"net"
	"strconv"
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

// TestDefaultMemoryCounts checks that a session of a policy without a
// memory limit gets Options.SessionMemory, which counts against the budget,
// and that the defaults let several such sessions live at once (moat's own
// default, half the host's memory, would let only one).
func TestDefaultMemoryCounts(t *testing.T) {
	p := withResult(testPolicy(t, "default"), func(r *policy.Result) { r.Config.Limits.MemoryBytes = 0 })
	m := newManager(t, Options{Policies: []Policy{p}, SessionMemory: 2 * testMemory, MaxTotalMemory: 3 * testMemory, WarmPool: -1})
	newSession(t, m, CreateRequest{})
	if _, err := m.Create(context.Background(), CreateRequest{}); code(err) != CodeMemoryBudget {
		t.Fatalf("a second default-memory session past the budget: %v", err)
	}
	newSession(t, m, CreateRequest{Narrow: Narrowing{Limits: NarrowLimits{MemoryBytes: testMemory}}})

	d := newManager(t, Options{Policies: []Policy{p}, WarmPool: -1})
	for range 3 {
		newSession(t, d, CreateRequest{})
	}
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

// TestDenyTCPPorts connects, on the host's network, to a listener whose
// port the server denies: refused; the control, a server that denies
// nothing, connects.
func TestDenyTCPPorts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	host := withResult(testPolicy(t, "default"), func(r *policy.Result) { r.Network.Mode = policy.NetworkHost })
	probe := []string{"bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(port) + " && echo connected"}
	for _, deny := range []bool{true, false} {
		opt := Options{Policies: []Policy{host}}
		if deny {
			opt.DenyTCPPorts = []uint16{uint16(port)}
		}
		s := newSession(t, newManager(t, opt), CreateRequest{})
		res, err := s.Run(context.Background(), RunRequest{Argv: probe}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if connected := string(res.Stdout) == "connected\n"; connected == deny {
			t.Errorf("deny %v: connected %v (%q %q)", deny, connected, res.Stdout, res.Stderr)
		}
	}
}

func TestNarrowRefusedByMoat(t *testing.T) {
	m := newManager(t, Options{})
	// Less memory than moat allows is the client's mistake.
	if _, err := m.Create(context.Background(), CreateRequest{Narrow: Narrowing{Limits: NarrowLimits{MemoryBytes: 1}}}); code(err) != CodeBadRequest {
		t.Errorf("memory 1 byte: %v", err)
	}
}

func TestReport(t *testing.T) {
	m := newManager(t, Options{Policies: []Policy{withResult(testPolicy(t, "default"), func(r *policy.Result) { r.Config.Limits.Timeout = 100 * time.Millisecond })}})
	s := newSession(t, m, CreateRequest{Name: "r"})
	if _, err := s.Run(context.Background(), RunRequest{Argv: []string{"sleep", "5"}}, nil); err != nil {
		t.Fatal(err)
	}
	live := s.Report()
	if live.Command != "session" || live.WorkDir != s.Info().WorkDir || live.Report == nil || len(live.Refusals) != 1 || len(s.Refusals()) != 1 {
		t.Errorf("live report: %+v", live)
	}
	final, err := s.Close()
	if err != nil || len(final.Refusals) < 1 || final.Refusals[0].Subject != "timeout" {
		t.Errorf("final report: %+v, %v", final, err)
	}
	if again := s.Report(); again.WorkDir != final.WorkDir {
		t.Errorf("Report after Close: %+v", again)
	}
	if again, err := s.Close(); err != nil || again.WorkDir != final.WorkDir {
		t.Errorf("a second Close: %+v, %v", again, err)
	}
}
