package refusal

import "sync"

// List collects a sandbox's refusals, each one once. The zero value is
// empty and ready; it is safe for concurrent use.
type List struct {
	mu   sync.Mutex
	list []Refusal
	seen map[Refusal]bool
	// counts are the entries AddCount keeps up to date: their place in
	// list and their total, by kind and subject.
	counts map[[2]string]*countEntry
}

// countEntry is one counting refusal's place in the list and its total.
type countEntry struct {
	at, total int
}

// AddCount adds n to the count kept under kind and subject, as one
// refusal whose detail detail(total) words; the first call adds it to the
// list, later ones update it in place.
func (rs *List) AddCount(kind, subject string, n int, detail func(total int) string) {
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

// Add records r, its Allow worded from its Setting (Derived), unless the
// same refusal is already recorded.
func (rs *List) Add(r Refusal) {
	r = Derived(r)
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

// Snapshot returns a copy of what is recorded so far, oldest first; nil
// when nothing is.
func (rs *List) Snapshot() []Refusal {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]Refusal(nil), rs.list...)
}
