package session

// The memory for background processes' output: each process keeps the
// newest bytes of its two streams (rings, ring.go), up to its share of
// its session's budget, and the sessions' budgets together stay within
// the server's (Options.SessionOutputCap, Options.MaxTotalOutput). A
// share that shrinks drops the oldest bytes kept, counted as Dropped;
// nothing is ever refused for output.

// Defaults of the output bounds' zero values.
const (
	defaultSessionOutputCap = 16 << 20
	defaultMaxTotalOutput   = 256 << 20
)

// outputBudget is what each of live sessions may keep: SessionOutputCap,
// or an equal part of MaxTotalOutput where that is less.
func (m *Manager) outputBudget(live int) int64 {
	return min(m.opt.SessionOutputCap, m.opt.MaxTotalOutput/int64(max(live, 1)))
}

// rebalanceOutput gives every live session its part of MaxTotalOutput,
// after a session was added or dropped. Rebalances run one at a time,
// each on the sessions live when it runs, so the last one leaves every
// session the share of the latest count; Create calls it before it
// returns the session, so a new one's processes never start before the
// others gave their memory back.
func (m *Manager) rebalanceOutput() {
	m.outMu.Lock()
	defer m.outMu.Unlock()
	m.mu.Lock()
	ss := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		ss = append(ss, s)
	}
	m.mu.Unlock()
	b := m.outputBudget(len(ss))
	for _, s := range ss {
		s.setOutputBudget(b)
	}
}

// keptOutput is the memory all live sessions' processes hold for their
// output, in bytes.
func (m *Manager) keptOutput() int64 {
	m.mu.Lock()
	ss := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		ss = append(ss, s)
	}
	m.mu.Unlock()
	var n int64
	for _, s := range ss {
		n += s.keptOutput()
	}
	return n
}

// setOutputBudget sets what s's processes may keep together and shares
// it among them.
func (s *Session) setOutputBudget(b int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outBudget = b
	if s.closed {
		return
	}
	s.shareOutputLocked(len(s.order), nil)
}

// streamShareLocked is what each stream of n processes may keep: an equal
// part of the session's budget, at most OutputCap. s.mu is held.
func (s *Session) streamShareLocked(n int) int {
	if n <= 0 {
		return s.cap
	}
	return int(min(int64(s.cap), s.outBudget/int64(2*n)))
}

// shareOutputLocked sets every kept process's rings, and extra's, to the
// share of n processes. s.mu is held.
func (s *Session) shareOutputLocked(n int, extra *proc) {
	c := s.streamShareLocked(n)
	for _, p := range s.procs {
		p.stdout.setCap(c)
		p.stderr.setCap(c)
	}
	if extra != nil {
		extra.stdout.setCap(c)
		extra.stderr.setCap(c)
	}
}

// releaseOutput gives back the memory of s's processes' output, once s
// is closed and no call can read it.
func (s *Session) releaseOutput() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		p.stdout.setCap(0)
		p.stderr.setCap(0)
	}
}

// keptOutput is the memory s's processes hold for their output.
func (s *Session) keptOutput() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, p := range s.procs {
		n += p.stdout.Kept() + p.stderr.Kept()
	}
	return n
}
