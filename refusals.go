package moat

import (
	"sync"

	"github.com/moat-sandbox/moat/internal/settings"
)

// Refusal is one thing the sandbox was refused, or one thing moat undid at
// the end of a run, said so that a person, or the model behind an agent, can
// fix the next try. The zero value is an empty refusal that says nothing.
type Refusal struct {
	// Kind is short and stable: "dns", "network", "exec", "limit",
	// "socket", "git-control", and so on.
	Kind string
	// Subject is what was refused: a host name, a path, a limit's name.
	Subject string
	// Detail says what happened, in words.
	Detail string
	// Allow names the flag (and Config field) that would allow it, in
	// words; empty when nothing should. moat derives it from Setting and
	// Value when it records the refusal.
	Allow string
	// Setting is the stable id of the setting that allows it, such as
	// "build", "network.allow-domain" or "limits.memory" (see the
	// report-json document for the list); empty when nothing should.
	Setting string
	// Value is what to give Setting's flag to allow it, when the refusal
	// says: a host name for "network.allow-domain", an address for
	// "network.allow-local", "unlimited" for a limit that could not be
	// measured. Empty when the user must choose (a size, a duration).
	Value string
}

// derived returns r with Allow worded from Setting and Value, so that the
// words and the id never disagree.
func (r Refusal) derived() Refusal {
	if r.Setting != "" {
		r.Allow = settings.Allow(r.Setting, r.Value)
	}
	return r
}

// String renders r as one line without the "moat: " prefix.
func (r Refusal) String() string {
	s := r.Kind + ": " + r.Subject
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	if r.Allow != "" {
		s += " (" + r.Allow + ")"
	}
	return s
}

// refusals collects a sandbox's refusals, each one once.
type refusals struct {
	mu   sync.Mutex
	list []Refusal
	seen map[Refusal]bool
	// counts are the entries addCount keeps up to date: their place in
	// list and their total, by kind and subject.
	counts map[[2]string]*countEntry
}

// countEntry is one counting refusal's place in the list and its total.
type countEntry struct {
	at, total int
}

// addCount adds n to the count kept under kind and subject, as one
// refusal whose detail detail(total) words; the first call adds it to the
// list, later ones update it in place.
func (rs *refusals) addCount(kind, subject string, n int, detail func(total int) string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.counts == nil {
		rs.counts = map[[2]string]*countEntry{}
	}
	key := [2]string{kind, subject}
	c := rs.counts[key]
	if c == nil {
		c = &countEntry{at: len(rs.list)}
		rs.counts[key] = c
		rs.list = append(rs.list, Refusal{Kind: kind, Subject: subject})
	}
	c.total += n
	rs.list[c.at].Detail = detail(c.total)
}

// add records r unless the same refusal is already recorded.
func (rs *refusals) add(r Refusal) {
	r = r.derived()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.seen == nil {
		rs.seen = map[Refusal]bool{}
	}
	if rs.seen[r] {
		return
	}
	rs.seen[r] = true
	rs.list = append(rs.list, r)
}

// snapshot returns a copy of what is recorded so far.
func (rs *refusals) snapshot() []Refusal {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]Refusal(nil), rs.list...)
}

// Refusals returns what the sandbox was refused so far, and what moat undid
// or neutralised when it closed, oldest first. Call it again after
// [Sandbox.Close] to see what Close found. Nil means nothing.
func (s *Sandbox) Refusals() []Refusal { return s.refused.snapshot() }

// addRefusal records r for [Sandbox.Refusals].
func (s *Sandbox) addRefusal(r Refusal) { s.refused.add(r) }
