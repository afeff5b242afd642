package proxy

import (
	"context"
	"errors"
	"net/netip"
	"time"
)

// This file is the one admission path every protocol goes through: policy
// check, resolution, address checks, audit.

// refusalKind says how a refusal is reported to the client.
type refusalKind int

const (
	refusedByPolicy  refusalKind = iota // the policy, an address check or the audit: 403, SOCKS 0x02
	refusedByResolve                    // the name did not resolve: 502, SOCKS 0x04
)

// refusal is a request the proxy will not dial.
type refusal struct {
	kind   refusalKind
	host   string
	reason string
}

// Reasons given when Config.Audit fails.
const (
	reasonAuditFailed = "audit log write failed"
	reasonAuditFull   = "audit log full"
)

// auditFailure is the reason for a connection refused by the audit error
// err.
func auditFailure(err error) string {
	if errors.Is(err, ErrAuditFull) {
		return reasonAuditFull
	}
	return reasonAuditFailed
}

// admission is an admitted request: the checked addresses to dial, in order.
type admission struct {
	addrs []netip.Addr
}

// admit decides r. When pinned is valid, r goes over an existing upstream
// connection to that address: the address is checked again for this
// decision but the name is not resolved. Otherwise the name (or IP literal)
// is resolved once and every address it resolves to must pass.
func (s *Server) admit(ctx context.Context, r Request, ip, pinned netip.Addr) (admission, *refusal) {
	d := s.cfg.Check(ctx, r)
	rec := Record{Time: time.Now(), Protocol: r.Protocol, Host: r.Host, Port: r.Port, Reason: d.Reason}
	if !d.Allow {
		if rec.Reason == "" {
			rec.Reason = "denied by policy"
		}
		return admission{}, s.refuse(rec, refusedByPolicy)
	}
	explicit := d.ExplicitIP && ip.IsValid()

	var addrs []netip.Addr
	switch {
	case pinned.IsValid():
		addrs = []netip.Addr{pinned}
	case ip.IsValid():
		addrs = []netip.Addr{ip}
	default:
		var err error
		addrs, err = s.resolve(ctx, r.Host)
		if err != nil {
			rec.Reason = "cannot resolve: " + err.Error()
			return admission{}, s.refuse(rec, refusedByResolve)
		}
	}

	hostAddrs := s.cfg.HostAddrs()
	for _, a := range addrs {
		if why := s.refusedAddr(a, explicit, hostAddrs); why != "" {
			rec.IP = a.String()
			if ip.IsValid() {
				rec.Reason = a.String() + " is " + why
			} else {
				rec.Reason = "resolves to " + a.String() + ", " + why
			}
			return admission{}, s.refuse(rec, refusedByPolicy)
		}
	}
	rec.IP = addrs[0].Unmap().String() // the form that is dialed
	rec.Allowed = true
	if err := s.audit(rec); err != nil {
		return admission{}, &refusal{kind: refusedByPolicy, host: r.Host, reason: auditFailure(err)}
	}
	return admission{addrs: addrs}, nil
}

// refusedAddr says why a must not be dialed, or "" when it may.
func (s *Server) refusedAddr(a netip.Addr, explicit bool, hostAddrs []netip.Addr) string {
	if explicit || inPrefixes(a, s.cfg.AllowLocal) {
		return ""
	}
	if why := classify(a); why != "" {
		return why
	}
	if isHostAddr(a, hostAddrs) {
		return "an address of this host"
	}
	return ""
}

// resolve looks host up once, within the dial timeout.
func (s *Server) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	addrs, err := s.cfg.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, lookupError(err)
	}
	out := addrs[:0:0]
	for _, a := range addrs {
		if a.IsValid() {
			out = append(out, a.WithZone("").Unmap()) // one spelling for IPv4, in checks and audit lines
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no addresses")
	}
	return out, nil
}

// refuse audits a refusal and returns it. An audit failure changes the
// reason: the client learns that the log, not the policy, refused it.
func (s *Server) refuse(rec Record, kind refusalKind) *refusal {
	r := &refusal{kind: kind, host: rec.Host, reason: rec.Reason}
	if err := s.audit(rec); err != nil {
		r.kind, r.reason = refusedByPolicy, auditFailure(err)
	}
	return r
}

// audit hands rec to Config.Audit, when there is one.
func (s *Server) audit(rec Record) error {
	if s.cfg.Audit == nil {
		return nil
	}
	return s.cfg.Audit(rec)
}
