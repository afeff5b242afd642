package policy

import (
	"fmt"
	"net/netip"

	"github.com/moat-sandbox/moat"
)

// auditKeepDays is how many daily audit files audit-rotate daily keeps.
const auditKeepDays = 30

// networkPolicy turns the checked network settings n into cfg's network
// policy and local ranges. It opens the audit log last, once everything
// else is known to be valid, and returns it so the caller closes it after
// the sandbox.
func networkPolicy(n Network, cfg *moat.Config) (*moat.NetworkAuditLog, error) {
	var pol moat.NetworkPolicy
	switch n.Mode {
	case "", NetworkDeny:
		return nil, nil // no proxy; the kernel refuses every connection
	case NetworkAllowAll:
		pol = moat.AllowAll()
	case NetworkAllowList:
		l, err := moat.AllowList(n.AllowDomains...)
		if err != nil {
			return nil, &reworded{msg: "--allow-domain: " + err.Error(), err: err}
		}
		pol = l
	case NetworkHost: // a policy document's "host" (document_fields.go): no proxy, nothing to list or audit
		cfg.Network = moat.HostNetwork()
		return nil, nil
	default:
		return nil, fmt.Errorf("--network %q: want deny, allow-all or allow-list", n.Mode)
	}
	for _, s := range n.AllowLocal {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("--allow-local %q: %w", s, err)
		}
		cfg.AllowLocal = append(cfg.AllowLocal, p)
	}
	cfg.Network = pol
	if n.AuditLog == "" {
		return nil, nil
	}
	// Before opening it, so that a refused log leaves no file behind.
	if err := moat.CheckAuditLogPath(n.AuditLog, *cfg); err != nil {
		return nil, placeError("--audit-log", n.AuditLog, err)
	}
	var log *moat.NetworkAuditLog
	var err error
	if n.AuditRotate == RotateDaily {
		log, err = moat.OpenDailyAuditLog(n.AuditLog, auditKeepDays)
	} else {
		log, err = moat.OpenAuditLog(n.AuditLog)
	}
	if err != nil {
		return nil, &reworded{msg: fmt.Sprintf("--audit-log %q: %s", n.AuditLog, err.Error()), err: err}
	}
	cfg.Network = moat.Audited(pol, log)
	return log, nil
}
