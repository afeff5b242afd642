package moat

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/moat-sandbox/moat/internal/auditlimit"
	"github.com/moat-sandbox/moat/internal/proxy"
)

// This file bounds what one sandbox's proxy writes to the audit log: see
// internal/auditlimit for the rules, and auditBudget for the bytes.

// auditFlushEvery is how often counts of decisions not written one by one
// are written as "repeated" lines, while there are any.
const auditFlushEvery = 5 * time.Second

// auditMinBudget is the least an audit budget is cut to by a small disk
// limit: room for a few hundred lines.
const auditMinBudget = 64 << 10

// auditBudget is the bytes of audit lines one sandbox may cause:
// auditlimit.DefaultMaxBytes (8 MiB), or the disk limit when that is
// smaller, but never less than auditMinBudget.
func auditBudget(cfg *Config) int64 {
	b := int64(auditlimit.DefaultMaxBytes)
	if cfg.Limits.DiskBytes > 0 && cfg.Limits.DiskBytes < b {
		b = max(cfg.Limits.DiskBytes, auditMinBudget)
	}
	return b
}

// errAuditFull refuses an allowed connection whose destination the
// truncated log can no longer record.
var errAuditFull = fmt.Errorf("audit log: this sandbox's share is full: %w", proxy.ErrAuditFull)

// auditThrottle is one sandbox's audit writer: every proxy decision passes
// its Limiter. The zero value is not usable; see newAuditThrottle.
type auditThrottle struct {
	s   *Sandbox
	lim *auditlimit.Limiter

	mu     sync.Mutex
	timer  *time.Timer // armed while counts wait for a flush
	closed bool

	// flushing is held while counts are written, so that close returns
	// only after a flush the timer started has written its lines.
	flushing sync.Mutex
}

func newAuditThrottle(s *Sandbox) *auditThrottle {
	return &auditThrottle{s: s, lim: auditlimit.New(auditlimit.Limits{MaxBytes: auditBudget(&s.cfg)})}
}

// record writes or counts r, the proxy's decision. A nil error lets the
// decision stand; errAuditFull refuses an allowed connection; any other
// error is a failed write.
func (a *auditThrottle) record(r AuditRecord) error {
	if len(auditLogs(a.s.cfg.Network)) == 0 {
		return nil
	}
	if h, _, err := normalizeHost(r.Host); err == nil {
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
		line, encErr = encodeAudit(a.s.id, &r)
		return len(line)
	})
	var err error
	switch {
	case encErr != nil:
		err = encErr
	case v == auditlimit.Write && line != nil:
		err = writeAuditLine(a.s.cfg.Network, line)
	case v == auditlimit.Count:
		a.arm()
	case v == auditlimit.Refuse:
		err = errAuditFull
	}
	a.truncation()
	return err
}

// arm makes sure a flush is due.
func (a *auditThrottle) arm() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.timer == nil && !a.closed {
		a.timer = time.AfterFunc(auditFlushEvery, a.flush)
	}
}

// flush writes one "repeated" line per kind of decision counted since the
// last flush.
func (a *auditThrottle) flush() {
	a.flushing.Lock()
	defer a.flushing.Unlock()
	a.mu.Lock()
	a.timer = nil
	a.mu.Unlock()
	lines := map[auditlimit.Key][]byte{}
	aggs := a.lim.Flush(func(g auditlimit.Aggregate) int {
		r := aggregateRecord(g)
		line, err := encodeAudit(a.s.id, &r)
		if err != nil {
			return 0
		}
		lines[g.Key] = line
		return len(line)
	})
	for _, g := range aggs {
		if line := lines[g.Key]; line != nil {
			_ = writeAuditLine(a.s.cfg.Network, line) // a failed write loses a count, not a decision
		}
	}
	a.truncation()
}

// truncation writes the line that says the log is truncated, once.
func (a *auditThrottle) truncation() {
	if !a.lim.TakeTruncation() {
		return
	}
	r := AuditRecord{Time: time.Now(), Reason: fmt.Sprintf("audit log truncated: this sandbox's lines reached %d bytes; "+
		"later decisions are only counted, in a line written when it closes, and connections to destinations "+
		"not yet recorded are refused", a.lim.Limits().MaxBytes)}
	if line, err := encodeAudit(a.s.id, &r); err == nil {
		_ = writeAuditLine(a.s.cfg.Network, line)
	}
}

// close writes what is still counted: the last "repeated" lines and, when
// the log was truncated, how many decisions were not written since. No
// decision is recorded after it.
func (a *auditThrottle) close() {
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
	r := AuditRecord{Time: time.Now(), Repeated: allowed + refused,
		Reason: fmt.Sprintf("audit log truncated: %d decisions after the truncation were not written "+
			"(%d allowed to destinations already recorded, %d refused)", allowed+refused, allowed, refused)}
	if line, err := encodeAudit(a.s.id, &r); err == nil {
		_ = writeAuditLine(a.s.cfg.Network, line)
	}
}

// aggregateRecord is the "repeated" line of g.
func aggregateRecord(g auditlimit.Aggregate) AuditRecord {
	ip, _ := netip.ParseAddr(g.Key.IP)
	return AuditRecord{Time: g.Last, Protocol: g.Key.Protocol, Host: g.Key.Host, Port: g.Key.Port, IP: ip,
		Allowed: g.Key.Allowed, Reason: g.Key.Reason, Repeated: g.Count}
}

// isAuditFull reports whether err refused a connection for a full log.
func isAuditFull(err error) bool { return errors.Is(err, proxy.ErrAuditFull) }
