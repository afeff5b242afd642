package policy

import (
	"strings"

	"github.com/moat-sandbox/moat"
)

// documentIsolation is a policy document's isolation level when it sets
// none: the CLI's default, so that toolchains find their files in the
// home (git config, caches) as in Heimdall, where the home is readable.
var documentIsolation = moat.IsolationDefault

// layer returns the document's settings as a [Layer] for [Merge], with
// its paths as written: the network, grants, protections, isolation,
// limits, enforcement and build mode. The environment, the sockets and
// the filesystem patterns depend on the host and are added by
// [Document.Exec].
func (d *Document) layer() Layer {
	l := Layer{
		Source:       documentSource{},
		Isolation:    d.Isolation,
		Security:     d.Protections,
		AllowDomains: d.AllowDomains,
		AllowLocal:   d.AllowLocal,
		AuditLog:     d.AuditLog,
		AuditRotate:  d.AuditRotate,
		Grants:       d.Grants,
		Limits:       d.Limits,
		Enforcement:  d.Enforcement,
		Build:        d.Build,
	}
	if l.Isolation == nil {
		l.Isolation = &documentIsolation
	}
	switch d.Network {
	case "", NetworkNone:
		l.Network = NetworkDeny
	default:
		l.Network = d.Network // host, allow-all, allow-list
	}
	return l
}

// documentKeys spells the config file's keys, which Merge and Resolve
// use, as a policy document does.
var documentKeys = map[string]string{
	"allow-domains":          "allowDomains",
	"allow-local":            "allowLocal",
	"audit-log":              "auditLog",
	"audit-rotate":           "auditRotate",
	"workdir.path":           "cwd",
	"limits.max-memory":      "limits.memory",
	"limits.max-cpu-time":    "limits.cpuTime",
	"limits.max-file-size":   "limits.fileSize",
	"limits.max-processes":   "limits.processes",
	"limits.max-open-files":  "limits.openFiles",
	"limits.max-disk":        "limits.disk",
	"limits.max-disk-inodes": "limits.diskInodes",
	"limits.io-priority":     "limits.ioPriority",
}

// documentSource names a policy document's settings in errors by its
// keys.
type documentSource struct{}

// Key returns key as a policy document spells it.
func (documentSource) Key(key string) string {
	if k, ok := documentKeys[key]; ok {
		return k
	}
	if rest, ok := strings.CutPrefix(key, "security."); ok {
		return "protections." + kebabToCamel(rest)
	}
	return key
}

// At returns "": the document's name is in the [DocumentError].
func (documentSource) At(string) string { return "" }

// kebabToCamel turns protect-user-home into protectUserHome.
func kebabToCamel(s string) string {
	parts := strings.Split(s, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
