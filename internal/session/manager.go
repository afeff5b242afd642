package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/hostfacts"
	"github.com/moat-sandbox/moat/internal/report/jsonv1"
	"github.com/moat-sandbox/moat/internal/size"
	"github.com/moat-sandbox/moat/policy"
)

// Defaults of Options' zero values.
const (
	defaultMaxSessions = 64
	defaultIdleTimeout = 15 * time.Minute
	defaultMaxLifetime = 8 * time.Hour
	defaultWarmPool    = 1
	defaultOutputCap   = 1 << 20
	// minSessionMemory is the least default memory limit of a session
	// (Options.SessionMemory).
	minSessionMemory = 512 << 20
	maxNameBytes     = 256
)

// Manager holds the sessions of one server. Make one with [NewManager];
// the zero value is unusable.
type Manager struct {
	opt      Options // with defaults
	policies []*served
	logMu    sync.Mutex

	mu       sync.Mutex
	sessions map[string]*Session
	pending  int   // sessions being made
	memory   int64 // sum of live and pending sessions' memory limits
	busy     map[string]bool
	closed   bool
	quit     chan struct{}
	reaped   chan struct{}
	reaping  sync.WaitGroup // the reaper's Closes in progress
	outMu    sync.Mutex     // one rebalanceOutput at a time
}

// served is one policy a Manager serves, with its warm pool.
type served struct {
	Policy
	summary Summary
	pool    *pool
}

// NewManager checks opt and starts the warm pools and the reaper.
func NewManager(opt Options) (*Manager, error) {
	if len(opt.Policies) == 0 {
		return nil, errorf(CodeBadRequest, "no policy to serve")
	}
	if opt.MaxSessions == 0 {
		opt.MaxSessions = defaultMaxSessions
	}
	if opt.MaxTotalMemory == 0 {
		opt.MaxTotalMemory = 2 * hostfacts.HalfMemory() // the host's memory
	}
	if opt.SessionMemory == 0 {
		opt.SessionMemory = max(hostfacts.HalfMemory()/4, minSessionMemory)
	}
	if opt.IdleTimeout == 0 {
		opt.IdleTimeout = defaultIdleTimeout
	}
	if opt.MaxLifetime == 0 {
		opt.MaxLifetime = defaultMaxLifetime
	}
	if opt.WarmPool == 0 {
		opt.WarmPool = defaultWarmPool
	}
	if opt.OutputCap == 0 {
		opt.OutputCap = defaultOutputCap
	}
	if opt.SessionOutputCap == 0 {
		opt.SessionOutputCap = defaultSessionOutputCap
	}
	if opt.MaxTotalOutput == 0 {
		opt.MaxTotalOutput = defaultMaxTotalOutput
	}
	if opt.MaxSessions < 0 || opt.MaxTotalMemory < 0 || opt.SessionMemory < 0 || opt.IdleTimeout < 0 || opt.MaxLifetime < 0 || opt.OutputCap < 0 ||
		opt.SessionOutputCap < 0 || opt.MaxTotalOutput < 0 {
		return nil, errorf(CodeBadRequest, "session options: a bound is negative")
	}
	m := &Manager{opt: opt, sessions: map[string]*Session{}, busy: map[string]bool{}, quit: make(chan struct{}), reaped: make(chan struct{})}
	for _, p := range opt.Policies {
		if p.Result.Config.Limits.MemoryBytes == 0 {
			// moat's own default (half the host's memory) would let two
			// sessions take the whole budget.
			p.Result.Config.Limits.MemoryBytes = opt.SessionMemory
		}
		if err := checkPolicyName(p.Name); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(m.policies, func(s *served) bool { return s.Name == p.Name }) {
			return nil, errorf(CodeBadRequest, "policy %q is named twice", p.Name)
		}
		m.policies = append(m.policies, &served{Policy: p, summary: summarize(p.Result, "")})
	}
	for _, s := range m.policies {
		if s.Result.WorkDir == "" { // one of its own serves one session: nothing to keep warm
			s.pool = newPool(opt.WarmPool, func() (*warm, error) { return build(s.Policy, s.Result, opt.DenyTCPPorts) }, m.logf)
		}
	}
	go m.reap()
	return m, nil
}

// checkPolicyName refuses a name outside [a-z0-9_-]{1,64}.
func checkPolicyName(name string) error {
	ok := name != "" && len(name) <= 64
	for _, c := range name {
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_')
	}
	if !ok {
		return errorf(CodeBadRequest, "policy name %q: want 1 to 64 of lower-case letters, digits, '-' and '_'", name)
	}
	return nil
}

// buildError is a failure of build: in resolving the settings (a value
// moat refuses) or in making the sandbox.
type buildError struct {
	resolve bool
	err     error
}

func (e *buildError) Error() string { return e.err.Error() }
func (e *buildError) Unwrap() error { return e.err }

// build makes a sandbox of r, policy p's settings as narrowed, that
// denies a TCP connect to each of denyPorts (the server's own).
func build(p Policy, r policy.Result, denyPorts []uint16) (*warm, error) {
	res, err := r.Resolve()
	if err != nil {
		return nil, &buildError{resolve: true, err: fmt.Errorf("policy %q: %w", p.Name, err)}
	}
	for _, port := range denyPorts {
		if !slices.Contains(res.Config.DenyTCPConnect, port) {
			res.Config.DenyTCPConnect = append(res.Config.DenyTCPConnect, port)
		}
	}
	if err := GrantSelf(&res.Config); err != nil { // files_binary.go: the file server
		res.Close()
		return nil, &buildError{err: fmt.Errorf("policy %q: %w", p.Name, err)}
	}
	sb, err := moat.New(res.Config)
	if err != nil {
		res.Close()
		return nil, &buildError{err: fmt.Errorf("policy %q: the sandbox could not be made: %w", p.Name, err)}
	}
	return &warm{sb: sb, resolved: res}, nil
}

// logf writes one line to Options.Log.
func (m *Manager) logf(format string, args ...any) {
	if m.opt.Log == nil {
		return
	}
	m.logMu.Lock()
	defer m.logMu.Unlock()
	fmt.Fprintf(m.opt.Log, format+"\n", args...)
}

// Policies lists the served policies, in the order given.
func (m *Manager) Policies() []PolicyInfo {
	out := make([]PolicyInfo, 0, len(m.policies))
	for _, p := range m.policies {
		out = append(out, PolicyInfo{Name: p.Name, Source: p.Source, Allows: p.summary})
	}
	return out
}

// pick finds the policy a request names: empty is the only one, or the
// one named "default".
func (m *Manager) pick(name string) (*served, error) {
	if name == "" {
		if len(m.policies) == 1 {
			return m.policies[0], nil
		}
		name = "default"
	}
	for _, p := range m.policies {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, 0, len(m.policies))
	for _, p := range m.policies {
		names = append(names, p.Name)
	}
	return nil, settingErrorf(CodeUnknownPolicy, "policy", "no policy named %q; this server serves %q", name, names)
}

// memoryOf is what a session's memory limit counts against the budget:
// moat's default (half the host's memory) for zero, the whole host's for
// unlimited.
func memoryOf(limit int64) int64 {
	switch {
	case limit == 0:
		return hostfacts.HalfMemory()
	case limit < 0:
		return 2 * hostfacts.HalfMemory()
	}
	return limit
}

// Create makes a session of the policy req names, narrowed as it asks.
func (m *Manager) Create(ctx context.Context, req CreateRequest) (*Session, error) {
	p, err := m.pick(req.Policy)
	if err != nil {
		return nil, err
	}
	if len(req.Name) > maxNameBytes || !utf8.ValidString(req.Name) {
		return nil, errorf(CodeBadRequest, "name: want at most %d bytes of UTF-8", maxNameBytes)
	}
	r, err := narrow(p.Result, req.Narrow)
	if err != nil {
		return nil, err
	}
	mem := memoryOf(r.Config.Limits.MemoryBytes)
	ownDir := r.WorkDir != ""
	if err := m.reserve(p.Name, mem, ownDir); err != nil {
		return nil, err
	}
	release := func() { m.release(p.Name, mem, ownDir, false) }
	if err := ctx.Err(); err != nil {
		release()
		return nil, errorf(CodeBadRequest, "the request ended before the session was made")
	}
	var w *warm
	if isZero(req.Narrow) {
		w = p.pool.take()
	}
	if w == nil {
		w, err = build(p.Policy, r, m.opt.DenyTCPPorts)
		if err != nil {
			release()
			code := CodeInternal
			if be := (*buildError)(nil); errors.As(err, &be) && be.resolve && !isZero(req.Narrow) {
				code = CodeBadRequest // a narrowed value moat refuses, such as too little memory
			}
			return nil, errorf(code, "%v", err)
		}
	}
	now := time.Now()
	s := &Session{
		id: newID(), name: req.Name, m: m, policy: p.Name, result: r,
		summary: summarize(r, w.sb.WorkDir()), sb: w.sb, resolved: w.resolved,
		created: now, lastUsed: now, memory: mem, ownDir: ownDir, cap: m.opt.OutputCap,
	}
	m.mu.Lock()
	m.pending--
	if m.closed {
		m.mu.Unlock()
		m.release(p.Name, mem, ownDir, true)
		s.shut()
		return nil, errorf(CodeClosed, "the server is shutting down")
	}
	m.sessions[s.id] = s
	s.outBudget = m.outputBudget(len(m.sessions))
	m.mu.Unlock()
	m.rebalanceOutput()
	m.logf("session %s: created from policy %q", s.id, p.Name)
	return s, nil
}

// reserve counts a session about to be made against the bounds.
func (m *Manager) reserve(policy string, mem int64, ownDir bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return errorf(CodeClosed, "the server is shutting down")
	case len(m.sessions)+m.pending >= m.opt.MaxSessions:
		return errorf(CodeTooMany, "%d sessions are open, the most this server allows; close one you no longer need", m.opt.MaxSessions)
	case m.memory+mem > m.opt.MaxTotalMemory:
		return settingErrorf(CodeMemoryBudget, "limits.max-memory", "a session with a memory limit of %s would pass the server's memory budget (%s of %s taken); close a session, or ask for less with narrow.limits.memory_bytes", size.Human(mem), size.Human(m.memory), size.Human(m.opt.MaxTotalMemory))
	case ownDir && m.busy[policy]:
		return settingErrorf(CodeBusy, "workdir.path", "policy %q names its own working directory, which a live session holds; close that session first", policy)
	}
	m.pending++
	m.memory += mem
	if ownDir {
		m.busy[policy] = true
	}
	return nil
}

// release returns what reserve counted; made says the session was
// already counted as live rather than pending.
func (m *Manager) release(policy string, mem int64, ownDir, made bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !made {
		m.pending--
	}
	m.memory -= mem
	if ownDir {
		delete(m.busy, policy)
	}
}

// isZero says whether n narrows nothing.
func isZero(n Narrowing) bool {
	return n.Network == "" && len(n.AllowDomains) == 0 && len(n.Grants) == 0 &&
		n.Limits == (NarrowLimits{}) && n.Isolation == "" && !n.NoBuild
}

// newID is a fresh random session id.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

// Get finds a live session.
func (m *Manager) Get(id string) (*Session, error) {
	m.mu.Lock()
	s, ok := m.sessions[id]
	m.mu.Unlock()
	if !ok {
		return nil, errorf(CodeNotFound, "no session %q; it may have closed on its idle timeout or lifetime limit: list the sessions, or create one", id)
	}
	return s, nil
}

// List describes the live sessions, oldest first.
func (m *Manager) List() []Info {
	m.mu.Lock()
	ss := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		ss = append(ss, s)
	}
	m.mu.Unlock()
	slices.SortFunc(ss, func(a, b *Session) int { return a.created.Compare(b.created) })
	out := make([]Info, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.Info())
	}
	return out
}

// CloseSession closes session id and returns its report.
func (m *Manager) CloseSession(id string) (jsonv1.Document, error) {
	s, err := m.Get(id)
	if err != nil {
		return jsonv1.Document{}, err
	}
	return s.Close()
}

// forget drops s from the live sessions and returns what it counted,
// once; later calls do nothing.
func (m *Manager) forget(s *Session) {
	m.mu.Lock()
	_, live := m.sessions[s.id]
	delete(m.sessions, s.id)
	m.mu.Unlock()
	if live {
		m.release(s.policy, s.memory, s.ownDir, true)
		m.rebalanceOutput()
	}
}

// Shutdown closes every session and the warm pools; Create fails after.
func (m *Manager) Shutdown() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	ss := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		ss = append(ss, s)
	}
	m.mu.Unlock()
	close(m.quit)
	<-m.reaped
	m.reaping.Wait()
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = s.Close() }()
	}
	for _, p := range m.policies {
		wg.Add(1)
		go func() { defer wg.Done(); p.pool.shutdown() }()
	}
	wg.Wait()
}
