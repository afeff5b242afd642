package auditlog

import (
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/moat-sandbox/moat/internal/auditlimit"
	"github.com/moat-sandbox/moat/internal/hostpattern"
	"github.com/moat-sandbox/moat/internal/proxy"
)

// This file bounds what one sandbox's proxy writes to the audit log: see
// internal/auditlimit for the rules, and Budget for the bytes.

// flushEvery is how often counts of decisions not written one by one are
// written as "repeated" lines, while there are any.
const flushEvery = 5 * time.Second

// minBudget is the least an audit budget is cut to by a small disk limit:
// room for a few hundred lines.
const minBudget = 64 << 10

// Budget is the bytes of audit lines one sandbox may cause:
// auditlimit.DefaultMaxBytes (8 MiB), or its disk limit diskBytes when
// that is smaller (0 is none), but never less than 64 KiB.
func Budget(diskBytes int64) int64 {
	b := int64(auditlimit.DefaultMaxBytes)
	if diskBytes > 0 && diskBytes < b {
		b = max(diskBytes, minBudget)
	}
	return b
}

// ErrFull refuses an allowed connection whose destination the truncated
// log can no longer record; it matches proxy.ErrAuditFull.
var ErrFull = fmt.Errorf("audit log: this sandbox's share is full: %w", proxy.ErrAuditFull)

// Throttle is one sandbox's audit writer: every proxy decision passes its
// Limiter. The zero value is not usable; see [NewThrottle].
type Throttle struct {
	id    string
	write func(line []byte) error // writes to every log; nil when there is none
	lim   *auditlimit.Limiter

	mu     sync.Mutex
	timer  *time.Timer // armed while counts wait for a flush
	closed bool

	// flushing is held while counts are written, so that close returns
	// only after a flush the timer started has written its lines.
	flushing sync.Mutex
}

// NewThrottle returns the throttle of sandbox id, whose lines may take
// maxBytes ([Budget]) and go to write, which writes one line to every
// log of the sandbox; a nil write means the sandbox has no log, and
// every decision stands unrecorded.
func NewThrottle(id string, maxBytes int64, write func(line []byte) error) *Throttle {
	return &Throttle{id: id, write: write, lim: auditlimit.New(auditlimit.Limits{MaxBytes: maxBytes})}
}

// Record writes or counts r, the proxy's decision. A nil error lets the
// decision stand; [ErrFull] refuses an allowed connection; any other
// error is a failed write.
func (a *Throttle) Record(r Record) error {
	if a.write == nil {
		return nil
	}
	if h, _, err := hostpattern.NormalizeHost(r.Host); err == nil {
		r.Host = h
	}
	ip := ""
	if r.IP.IsValid() {
		ip = r.IP.String()
	}
	k := auditlimit.NewKey(r.Allowed, r.Protocol, r.Host, r.Port, ip, r.Reason)
	var line []byte
	var encErr error
	v := a.lim.Admit(k, r.Time, func() int {
		line, encErr = a.encode(&r)
		return len(line)
	})
	var err error
	switch {
	case encErr != nil:
		err = encErr
	case v == auditlimit.Write && line != nil:
		err = a.write(line)
	case v == auditlimit.Count:
		a.arm()
	case v == auditlimit.Refuse:
		err = ErrFull
	}
	a.truncation()
	return err
}

// encode normalizes r for the sandbox and encodes it once for every log
// (a zero Time is the time now).
func (a *Throttle) encode(r *Record) ([]byte, error) {
	if h, _, err := hostpattern.NormalizeHost(r.Host); err == nil {
		r.Host = h
	}
	r.Sandbox = a.id
	line, err := Encode(*r, time.Now)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return line, nil
}

// writeLine writes line to every log, if there is one.
func (a *Throttle) writeLine(line []byte) error {
	if a.write == nil {
		return nil
	}
	return a.write(line)
}

// arm makes sure a flush is due.
func (a *Throttle) arm() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.timer == nil && !a.closed {
		a.timer = time.AfterFunc(flushEvery, a.flush)
	}
}

// flush writes one "repeated" line per kind of decision counted since the
// last flush.
func (a *Throttle) flush() {
	a.flushing.Lock()
	defer a.flushing.Unlock()
	a.mu.Lock()
	a.timer = nil
	a.mu.Unlock()
	lines := map[auditlimit.Key][]byte{}
	aggs := a.lim.Flush(func(g auditlimit.Aggregate) int {
		r := aggregateRecord(g)
		line, err := a.encode(&r)
		if err != nil {
			return 0
		}
		lines[g.Key] = line
		return len(line)
	})
	for _, g := range aggs {
		if line := lines[g.Key]; line != nil {
			_ = a.writeLine(line) // a failed write loses a count, not a decision
		}
	}
	a.truncation()
}

// truncation writes the line that says the log is truncated, once.
func (a *Throttle) truncation() {
	if !a.lim.TakeTruncation() {
		return
	}
	r := Record{Time: time.Now(), Reason: fmt.Sprintf("audit log truncated: this sandbox's lines reached %d bytes; "+
		"later decisions are only counted, in a line written when it closes, and connections to destinations "+
		"not yet recorded are refused", a.lim.Limits().MaxBytes)}
	if line, err := a.encode(&r); err == nil {
		_ = a.writeLine(line)
	}
}

// Close writes what is still counted: the last "repeated" lines and, when
// the log was truncated, how many decisions were not written since. No
// decision is recorded after it. A nil Throttle does nothing.
func (a *Throttle) Close() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.closed = true
	if a.timer != nil {
		a.timer.Stop()
	}
	a.mu.Unlock()
	a.flush() // after any flush in flight
	allowed, refused, truncated := a.lim.Summary()
	if !truncated || allowed+refused == 0 {
		return
	}
	r := Record{Time: time.Now(), Repeated: allowed + refused,
		Reason: fmt.Sprintf("audit log truncated: %d decisions after the truncation were not written "+
			"(%d allowed to destinations already recorded, %d refused)", allowed+refused, allowed, refused)}
	if line, err := a.encode(&r); err == nil {
		_ = a.writeLine(line)
	}
}

// aggregateRecord is the "repeated" line of g.
func aggregateRecord(g auditlimit.Aggregate) Record {
	ip, _ := netip.ParseAddr(g.Key.IP)
	return Record{Time: g.Last, Protocol: g.Key.Protocol, Host: g.Key.Host, Port: g.Key.Port, IP: ip,
		Allowed: g.Key.Allowed, Reason: g.Key.Reason, Repeated: g.Count}
}
