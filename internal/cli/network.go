package cli

import (
	"net/netip"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// auditKeepDays is how many daily audit files --audit-rotate daily keeps.
const auditKeepDays = 30

// networkConfig turns the validated network settings into the sandbox's
// policy. It opens the audit log last, once everything else is known to be
// valid, and returns it so the caller closes it after the sandbox.
func networkConfig(n policy.Network, cfg *moat.Config) (*moat.NetworkAuditLog, error) {
	var pol moat.NetworkPolicy
	switch n.Mode {
	case "", policy.NetworkDeny:
		return nil, nil // no proxy; the kernel refuses every connection
	case policy.NetworkAllowAll:
		pol = moat.AllowAll()
	case policy.NetworkAllowList:
		l, err := moat.AllowList(n.AllowDomains...)
		if err != nil {
			return nil, usagef("--allow-domain: %s", trimMoat(err))
		}
		pol = l
	default:
		return nil, usagef("--network %q: want deny, allow-all or allow-list", n.Mode)
	}
	for _, s := range n.AllowLocal {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, usagef("--allow-local %q: %v", s, err)
		}
		cfg.AllowLocal = append(cfg.AllowLocal, p)
	}
	cfg.Network = pol
	if n.AuditLog == "" {
		return nil, nil
	}
	// Before opening it, so that a refused log leaves no file behind.
	if err := moat.CheckAuditLogPath(n.AuditLog, *cfg); err != nil {
		return nil, placeUsage("--audit-log", n.AuditLog, err)
	}
	var log *moat.NetworkAuditLog
	var err error
	if n.AuditRotate == policy.RotateDaily {
		log, err = moat.OpenDailyAuditLog(n.AuditLog, auditKeepDays)
	} else {
		log, err = moat.OpenAuditLog(n.AuditLog)
	}
	if err != nil {
		return nil, usagef("--audit-log %q: %s", n.AuditLog, trimMoat(err))
	}
	cfg.Network = moat.Audited(pol, log)
	return log, nil
}

// trimMoat drops the "moat: " prefix of a library error that a usage error
// wraps again.
func trimMoat(err error) string { return strings.TrimPrefix(err.Error(), "moat: ") }
