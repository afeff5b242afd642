package session

import "time"

// reapInterval is how often the reaper looks: a tenth of the shorter of
// the idle timeout and the lifetime, between 5 ms and 5 s.
func (m *Manager) reapInterval() time.Duration {
	d := min(m.opt.IdleTimeout, m.opt.MaxLifetime) / 10
	return min(max(d, 5*time.Millisecond), 5*time.Second)
}

// reap closes, until Shutdown, the sessions idle past the idle timeout
// (no call for that long, none running) or past their lifetime.
func (m *Manager) reap() {
	defer close(m.reaped)
	t := time.NewTicker(m.reapInterval())
	defer t.Stop()
	for {
		select {
		case <-m.quit:
			return
		case now := <-t.C:
			for _, s := range m.expired(now) {
				go func() {
					m.logf("session %s: closed: %s", s.id, s.expiry(now))
					_, _ = s.Close()
				}()
			}
		}
	}
}

// expired lists the live sessions the reaper must close now.
func (m *Manager) expired(now time.Time) []*Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Session
	for _, s := range m.sessions {
		if s.expiry(now) != "" {
			out = append(out, s)
		}
	}
	return out
}

// expiry says why s is past a limit at now, or "" when it is not: its
// lifetime, or its idle timeout while no command of a Run is in progress.
func (s *Session) expiry(now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case now.Sub(s.created) >= s.m.opt.MaxLifetime:
		return "lifetime limit"
	case s.running == 0 && now.Sub(s.lastUsed) >= s.m.opt.IdleTimeout:
		return "idle timeout"
	}
	return ""
}
