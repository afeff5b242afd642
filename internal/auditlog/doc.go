// Package auditlog is the network audit log behind moat.NetworkAuditLog:
// the JSON line of a decision, the single file or the one file a day with
// its pruning, and the throttle that bounds what one sandbox's proxy
// writes (see internal/auditlimit for its rules). It imports nothing above
// it: moat converts its moat.AuditRecord to a Record and hands over the
// sandbox's id, budget and logs as values.
package auditlog
