// Package auditlimit bounds what one sandbox can make moat write to a
// network audit log, without losing the fact of any decision.
//
// A [Limiter] sits between one sandbox's policy proxy and the log. Each
// decision has a [Key] (allowed or not, protocol, host, port, address,
// reason). The first PerKey decisions of a key are written one line each;
// later ones are counted, and the count is written as one "repeated N"
// line per key when the caller flushes (periodically, and when the
// sandbox closes). Every line written is charged against MaxBytes; the
// last Reserve bytes of it are kept for the line that says the log was
// truncated and the summary written at Close, so those are never lost.
// Once truncated, decisions are only counted, and an allowed decision
// whose key has no line yet is refused: a destination the log cannot
// name is not dialed. Until then every key's first decision has a line of
// its own, so the log names every destination the sandbox reached.
package auditlimit

import (
	"sync"
	"time"
)

// Key is what makes two decisions "the same" for aggregation. The zero
// value is a refusal with nothing named, such as a refused connection.
type Key struct {
	// Allowed is the decision.
	Allowed bool
	// Protocol, Host, Port and IP name the destination as the line does.
	Protocol string
	Host     string
	Port     int
	IP       string
	// Reason is the line's reason, clipped to maxReasonKey bytes.
	Reason string
}

// maxReasonKey bounds the bytes of a reason kept in a Key, so that the
// memory of MaxKeys keys is bounded whatever the reasons.
const maxReasonKey = 512

// NewKey returns the Key of a decision, its reason clipped.
func NewKey(allowed bool, protocol, host string, port int, ip, reason string) Key {
	if len(reason) > maxReasonKey {
		reason = reason[:maxReasonKey]
	}
	return Key{Allowed: allowed, Protocol: protocol, Host: host, Port: port, IP: ip, Reason: reason}
}

// Verdict is what to do with one decision. The zero value is Write.
type Verdict int

const (
	// Write: write the decision's line; it has been charged.
	Write Verdict = iota
	// Count: write nothing now; the decision is counted and a later
	// Flush or Summary reports it. The decision stands.
	Count
	// Refuse: an allowed decision must be refused, since the log is
	// truncated and has no line for its destination; it is counted as a
	// refusal. Write nothing.
	Refuse
)

// Limits are a Limiter's bounds. A zero field means its default.
type Limits struct {
	// PerKey is how many decisions of one key are written in full before
	// they are only counted. Zero means 5.
	PerKey int
	// MaxKeys bounds the keys remembered. A decision of a new key past it
	// is written in full (it is still charged) but not remembered. Zero
	// means 4096.
	MaxKeys int
	// MaxBytes bounds the bytes of every line written, aggregate and
	// truncation lines included. Zero means 8 MiB.
	MaxBytes int64
	// Reserve is the part of MaxBytes kept for the truncation line and
	// the summary. Zero means 2 KiB.
	Reserve int64
}

// Defaults of Limits' zero fields.
const (
	DefaultPerKey   = 5
	DefaultMaxKeys  = 4096
	DefaultMaxBytes = 8 << 20
	DefaultReserve  = 2 << 10
)

// Aggregate is a count of decisions of one key that were not written one
// by one. The zero value counts nothing.
type Aggregate struct {
	Key   Key
	Count int64
	Last  time.Time // when the last of them was decided
}

// entry is a remembered key.
type entry struct {
	written int   // lines written in full
	pending int64 // counted since the last flush
	last    time.Time
}

// Limiter applies Limits to one sandbox's decisions. Make one with New;
// the zero value is not usable. It is safe for concurrent use.
type Limiter struct {
	lim Limits

	mu        sync.Mutex
	keys      map[Key]*entry
	pending   int // keys with pending > 0
	used      int64
	truncated bool
	told      bool // TakeTruncation has reported the truncation
	// After truncation: decisions counted, by their final decision.
	lateAllowed, lateRefused int64
}

// New returns a Limiter for lim, its zero fields set to the defaults.
func New(lim Limits) *Limiter {
	if lim.PerKey <= 0 {
		lim.PerKey = DefaultPerKey
	}
	if lim.MaxKeys <= 0 {
		lim.MaxKeys = DefaultMaxKeys
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultMaxBytes
	}
	if lim.Reserve <= 0 {
		lim.Reserve = DefaultReserve
	}
	if lim.Reserve > lim.MaxBytes {
		lim.Reserve = lim.MaxBytes
	}
	return &Limiter{lim: lim, keys: map[Key]*entry{}}
}

// Limits returns the limits in force, defaults filled in.
func (l *Limiter) Limits() Limits { return l.lim }

// Admit decides what to do with a decision of k made at t. size returns
// the bytes of its line; it is called, with the Limiter locked, only when
// the line would be written.
func (l *Limiter) Admit(k Key, t time.Time, size func() int) Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[k]
	if l.truncated {
		return l.late(k, e)
	}
	if e != nil && e.written >= l.lim.PerKey {
		if e.pending == 0 {
			l.pending++
		}
		e.pending++
		e.last = t
		return Count
	}
	n := int64(size())
	if l.used+n > l.lim.MaxBytes-l.lim.Reserve {
		l.truncated = true
		return l.late(k, e)
	}
	l.used += n
	if e == nil && len(l.keys) < l.lim.MaxKeys {
		e = &entry{}
		l.keys[k] = e
	}
	if e != nil {
		e.written++
	}
	return Write
}

// late counts a decision made once the log is truncated: an allowed one
// whose key has no line is refused.
func (l *Limiter) late(k Key, e *entry) Verdict {
	if k.Allowed && e == nil {
		l.lateRefused++
		return Refuse
	}
	if k.Allowed {
		l.lateAllowed++
	} else {
		l.lateRefused++
	}
	return Count
}

// Flush returns the counts of decisions not written since the last Flush,
// one Aggregate per key, and charges each line's size (sizeOf returns it)
// against MaxBytes. Counts whose line no longer fits are kept for Summary
// instead, and the log becomes truncated (see TakeTruncation). Nil means
// nothing to write.
func (l *Limiter) Flush(sizeOf func(Aggregate) int) (aggs []Aggregate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == 0 {
		return nil
	}
	for k, e := range l.keys {
		if e.pending == 0 {
			continue
		}
		a := Aggregate{Key: k, Count: e.pending, Last: e.last}
		e.pending = 0
		if !l.truncated {
			n := int64(sizeOf(a))
			if l.used+n <= l.lim.MaxBytes-l.lim.Reserve {
				l.used += n
				aggs = append(aggs, a)
				continue
			}
			l.truncated = true
		}
		if k.Allowed {
			l.lateAllowed += a.Count
		} else {
			l.lateRefused += a.Count
		}
	}
	l.pending = 0
	return aggs
}

// TakeTruncation reports true exactly once, after the log became
// truncated: the caller then writes the line that says so, which the
// reserve holds room for.
func (l *Limiter) TakeTruncation() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.truncated || l.told {
		return false
	}
	l.told = true
	return true
}

// Summary reports, once the log is truncated, how many decisions were not
// written since, by final decision; ok is false when it was never
// truncated. Call it after the last Flush.
func (l *Limiter) Summary() (allowed, refused int64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lateAllowed, l.lateRefused, l.truncated
}

// Used returns the bytes charged so far, the reserve not included.
func (l *Limiter) Used() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used
}
