package policy

import (
	"reflect"
	"strings"
	"unicode"

	"github.com/moat-sandbox/moat"
)

// The fields of a policy document, as one table: the decoder checks a
// document against it (every object closed, every value of its kind) and
// [DocumentSchema] is generated from it, so the two cannot disagree.

// fieldKind is the JSON shape a field's value must have.
type fieldKind int

const (
	kindString    fieldKind = iota // a string
	kindStrings                    // an array of strings
	kindBool                       // true or false
	kindEnum                       // one of field.enum
	kindObject                     // a closed object of field.fields
	kindStringMap                  // an object whose values are strings; its keys are free
	kindEnumMap                    // an object whose values are among field.enum; its keys are free
	kindSize                       // a number of bytes, a size such as "2G", or "unlimited"
	kindCount                      // a whole number or "unlimited"
	kindDuration                   // a duration such as "30s", or whole seconds
	kindInteger                    // a whole number
)

// field is one key of a policy document object.
type field struct {
	name     string
	kind     fieldKind
	enum     []string // kindEnum, kindEnumMap
	fields   []field  // kindObject
	minItems int      // kindStrings: the fewest items
	min, max int      // kindInteger: the range
	doc      string
}

// Values of the enumerated fields.
const (
	// StdioInherit gives the command moat's own standard streams.
	StdioInherit = "inherit"
	// StdioPiped gives the command /dev/null as standard input, and
	// copies its output and error to moat's.
	StdioPiped = "piped"
	// ProcDefault mounts a /proc of the sandbox's own.
	ProcDefault = "default"
	// ProcNone leaves /proc out of the sandbox ([moat.Config.HideProc]).
	ProcNone = "none"
	// NetworkNone is a policy document's name for [NetworkDeny]: no
	// network at all. It is the default.
	NetworkNone = "none"
	// NetworkHost leaves the sandbox on the host's network, with no
	// network namespace and no proxy ([moat.HostNetwork]).
	NetworkHost = "host"
	// HardLinkGapsRefuse refuses a policy that denies a file with another
	// name (hard link) outside the cwd. It is the default.
	HardLinkGapsRefuse = "refuse"
	// HardLinkGapsWarn runs such a policy, with a warning.
	HardLinkGapsWarn = "warn"
)

// documentNetworks are the values of "network", in the order the schema
// lists them.
var documentNetworks = []string{NetworkNone, NetworkHost, NetworkAllowAll, NetworkAllowList}

// documentFields is the top level of a policy document.
var documentFields = []field{
	{name: "command", kind: kindStrings, minItems: 1, doc: "Required. The command and its arguments, run directly, with no shell."},
	{name: "cwd", kind: kindString, doc: "The directory the command runs in; ~ and $VAR are expanded; default: the current directory. It is readable, and writable only where filesystem.writable says."},
	{name: "stdio", kind: kindEnum, enum: []string{StdioInherit, StdioPiped}, doc: "inherit (default): moat's own streams; piped: /dev/null as standard input, output and error copied."},
	{name: "network", kind: kindEnum, enum: documentNetworks, doc: "none (default): no network; host: the host's network, unfiltered; allow-all: public hosts through moat's proxy; allow-list: only allowDomains, through the proxy."},
	{name: "proc", kind: kindEnum, enum: []string{ProcDefault, ProcNone}, doc: "default: the sandbox's own /proc; none: no /proc."},
	{name: "env", kind: kindObject, doc: "The environment the command gets from moat's.", fields: []field{
		{name: "allow", kind: kindStrings, doc: "Allowlist mode: only these host variables pass (the default mode, with an empty list)."},
		{name: "deny", kind: kindStrings, doc: "Without allow, blocklist mode: every host variable but these passes; with allow, these are removed from it."},
		{name: "set", kind: kindStringMap, doc: "Variables set to a value, over everything else."},
	}},
	{name: "filesystem", kind: kindObject, doc: "Gitignore-style patterns relative to cwd, and virtual files.", fields: []field{
		{name: "deny", kind: kindStrings, doc: "Paths the command may neither read nor write; ! negates, later lines win."},
		{name: "writable", kind: kindStrings, doc: "Paths the command may write."},
		{name: "virtual", kind: kindStringMap, doc: "Absolute path to read-only contents the command sees there; never written to the host."},
		{name: "hardLinkGaps", kind: kindEnum, enum: []string{HardLinkGapsRefuse, HardLinkGapsWarn}, doc: "refuse (default): a denied file with another name (hard link) outside cwd, which moat cannot deny, refuses the policy; warn: run, and say so on standard error."},
	}},
	{name: "enabled", kind: kindBool, doc: "Accepted only as true: a policy document always sandboxes."},
	{name: "sshAgent", kind: kindBool, doc: "Expose the SSH agent socket of SSH_AUTH_SOCK, if it exists."},
	{name: "gpgAgent", kind: kindBool, doc: "Expose GnuPG's agent sockets (GPG_AGENT_INFO, $XDG_RUNTIME_DIR/gnupg, gpgconf --list-dirs), where they exist."},
	{name: "ageAgent", kind: kindBool, doc: "Expose the age agent sockets of AGE_AUTH_SOCK and GOPASS_AGE_AGENT_SOCK, if they exist."},
	{name: "allowDomains", kind: kindStrings, doc: "With network allow-list, the host patterns the proxy lets through: example.com, *.example.com, an IP, optionally :PORT."},
	{name: "allowLocal", kind: kindStrings, doc: "Private or loopback ranges (CIDR, or one IP) the proxy may dial."},
	{name: "auditLog", kind: kindString, doc: "Append one JSON line per network decision to this file (relative to cwd); needs allow-all or allow-list."},
	{name: "auditRotate", kind: kindEnum, enum: []string{RotateDaily}, doc: "daily: auditLog is a directory of daily files."},
	{name: "grants", kind: kindEnumMap, enum: []string{"r", "rw", "rx", "rwx"}, doc: "Paths outside cwd (relative to cwd, ~ for the home) with their access."},
	{name: "protections", kind: kindObject, fields: protectionFields(), doc: "Security switches over the isolation level's preset."},
	{name: "isolation", kind: kindEnum, enum: []string{"strict", "default", "permissive"}, doc: "How much of the host the sandbox sees (default: default)."},
	{name: "limits", kind: kindObject, doc: "Resource limits; 0 means moat's default, \"unlimited\" none.", fields: []field{
		{name: "memory", kind: kindSize, doc: "Memory of the whole sandbox."},
		{name: "cpuTime", kind: kindCount, doc: "CPU seconds of each process."},
		{name: "fileSize", kind: kindSize, doc: "Largest file a process may write."},
		{name: "processes", kind: kindCount, doc: "Most processes and threads."},
		{name: "openFiles", kind: kindCount, doc: "Most open descriptors of each process."},
		{name: "disk", kind: kindSize, doc: "How much the sandbox may write."},
		{name: "diskInodes", kind: kindCount, doc: "Most files and directories the sandbox may create."},
		{name: "timeout", kind: kindDuration, doc: "Wall-clock limit, like \"30s\", or whole seconds."},
		{name: "nice", kind: kindInteger, min: 0, max: moat.MaxNice, doc: "Lower the CPU priority by this many steps."},
		{name: "ioPriority", kind: kindEnum, enum: []string{"utility", "background"}, doc: "Lower the disk priority."},
	}},
	{name: "enforcement", kind: kindEnum, enum: []string{"strict", "best-effort"}, doc: "strict (default): fail where the host cannot enforce a layer; best-effort: run with what it can."},
	{name: "build", kind: kindBool, doc: "Build mode: the sandbox may run what it builds in its working directory."},
}

// protectionFields are the switches of [moat.SecurityOverrides], one per
// field, named in lower camel case (ProtectUserHome is protectUserHome),
// so that a switch added to moat is a policy field at once.
func protectionFields() []field {
	t := reflect.TypeFor[moat.SecurityOverrides]()
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Type != reflect.TypeFor[*bool]() {
			continue
		}
		out = append(out, field{name: lowerCamel(f.Name), kind: kindBool, doc: "Sets moat's " + f.Name + " switch."})
	}
	return out
}

// protectionIndex maps a protections key to its SecurityOverrides field.
func protectionIndex() map[string]int {
	t := reflect.TypeFor[moat.SecurityOverrides]()
	m := map[string]int{}
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && f.Type == reflect.TypeFor[*bool]() {
			m[lowerCamel(f.Name)] = i
		}
	}
	return m
}

// lowerCamel lower-cases the first letter of a Go field name.
func lowerCamel(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// lookupField finds name among fields.
func lookupField(fields []field, name string) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// describeEnum spells an enumeration for a message: a, b or c.
func describeEnum(vals []string) string {
	switch len(vals) {
	case 0:
		return "nothing"
	case 1:
		return vals[0]
	}
	return strings.Join(vals[:len(vals)-1], ", ") + " or " + vals[len(vals)-1]
}
