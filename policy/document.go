package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/fspattern"
)

// maxDocumentSize bounds what ReadDocument reads: a policy is a few lines,
// virtual files included.
const maxDocumentSize = 1 << 20

// Document is a checked policy document: the JSON form of a sandbox
// policy that moat exec runs, with Heimdall's fields and moat's own. Every
// object of the document is closed (an unknown key is an error), and every
// value is checked when it is read, by the same parsers as the config
// file's. Paths are kept as written; [Document.Exec] places them. The zero
// value runs no command; with a Command, it is the strictest policy moat
// exec has: no host variables, the cwd read-only, no network, default
// isolation.
type Document struct {
	// Command is the argv, run without a shell. Never empty once read.
	Command []string
	// Cwd is the directory the command runs in, as written ("~" and
	// $VAR not yet expanded); "" is the current directory.
	Cwd string
	// Stdio is StdioInherit or StdioPiped; "" is StdioInherit.
	Stdio string
	// Network is NetworkNone, NetworkHost, NetworkAllowAll or
	// NetworkAllowList; "" is NetworkNone.
	Network string
	// Proc is ProcDefault or ProcNone; "" is ProcDefault.
	Proc string
	// Env is which of moat's environment variables the command gets.
	Env DocumentEnv
	// Filesystem is the patterns and virtual files.
	Filesystem DocumentFilesystem
	// SSHAgent, GPGAgent and AgeAgent expose the agents' sockets and
	// variables (see [DiscoverAgents]); false exposes nothing.
	SSHAgent, GPGAgent, AgeAgent bool

	// AllowDomains holds the normalized allow-list patterns
	// ([ParseDomain]); nil for none.
	AllowDomains []string
	// AllowLocal holds canonical prefixes ([ParseLocal]); nil for none.
	AllowLocal []string
	// AuditLog is the audit log's path as written; "" for none.
	AuditLog string
	// AuditRotate is RotateDaily or "".
	AuditRotate string
	// Grants holds the paths as written with their access, in the
	// document's order; nil for none.
	Grants []moat.PathRequest
	// Protections switches protections over the isolation level's preset.
	Protections moat.SecurityOverrides
	// Isolation, when set, is the isolation level; nil is the CLI's
	// default, [moat.IsolationDefault].
	Isolation *moat.Isolation
	// Limits sets resource limits and priorities; nil fields are moat's
	// defaults.
	Limits Limits
	// Enforcement, when set, is the enforcement mode; nil is Strict.
	Enforcement *moat.Enforcement
	// Build, when set, turns build mode on or off; nil is off.
	Build *bool
}

// DocumentEnv is the "env" object of a policy document. The zero value is
// allowlist mode with an empty list: no host variable passes beyond the
// harmless ones moat always passes (TERM, LANG, LC_*, TZ...).
type DocumentEnv struct {
	// Allow lists the host variables that pass, in allowlist mode.
	Allow []string
	// Blocklist is true when the document has deny but no allow: every
	// host variable passes except Deny (and what the sandbox owns, such
	// as PATH and HOME). False is allowlist mode.
	Blocklist bool
	// Deny lists variables that never pass, in either mode: deny
	// overrides allow.
	Deny []string
	// Set holds variables set to a value, in the document's order.
	Set []EnvVar
}

// DocumentFilesystem is the "filesystem" object of a policy document. The
// zero value denies nothing beyond moat's protections and makes nothing
// of the cwd writable.
type DocumentFilesystem struct {
	// Deny and Writable are gitignore-style patterns relative to the cwd,
	// in order; nil for none.
	Deny, Writable []string
	// Virtual maps absolute, clean paths to read-only contents; nil for
	// none.
	Virtual map[string]string
	// HardLinkGaps is what a denied file with another name (a hard link)
	// outside the cwd, which moat cannot deny, does: HardLinkGapsRefuse
	// (also "", the default) refuses the policy, HardLinkGapsWarn runs
	// with a warning.
	HardLinkGaps string
}

// DocumentError is a mistake in a policy document. Its message reads
//
//	policy "p.json": unknown policy field: bogus
//
// The zero value is not useful.
type DocumentError struct {
	// Name is the document's name as given to [ReadDocument]; "" or "-"
	// for standard input, which the message leaves unnamed.
	Name string
	// Err says what is wrong.
	Err error
}

// Error returns the one-line message.
func (e *DocumentError) Error() string {
	if e.Name == "" || e.Name == "-" {
		return "policy: " + e.Err.Error()
	}
	return "policy " + strconv.Quote(e.Name) + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *DocumentError) Unwrap() error { return e.Err }

// ErrPolicyDisabled is the error of a document with "enabled": false: moat
// exec always sandboxes, so it refuses a policy that asks it not to.
var ErrPolicyDisabled = errors.New("policy enabled=false is not supported by moat exec: a policy document always sandboxes")

// ReadDocument reads and checks the policy document r, named name in
// errors ("-" for standard input). Every mistake is a [*DocumentError].
func ReadDocument(name string, r io.Reader) (*Document, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDocumentSize+1))
	if err != nil {
		return nil, &DocumentError{Name: name, Err: unwrapPath(err)}
	}
	if len(data) > maxDocumentSize {
		return nil, &DocumentError{Name: name, Err: errors.New("larger than 1 MiB")}
	}
	d, err := ParseDocument(data)
	if err != nil {
		return nil, &DocumentError{Name: name, Err: err}
	}
	return d, nil
}

// ParseDocument checks the policy document data. Its error says only what
// is wrong: "policy JSON must be an object", "unknown policy field: KEY"
// (a nested one as filesystem.KEY), a value of the wrong kind, "missing
// command", or [ErrPolicyDisabled]. It does no I/O.
func ParseDocument(data []byte) (*Document, error) {
	root, err := readJSON(data)
	if err != nil {
		return nil, err
	}
	if root.kind != 'o' {
		return nil, errors.New("policy JSON must be an object")
	}
	if err := checkObject(root, documentFields, ""); err != nil {
		return nil, err
	}
	return extract(root)
}

// checkObject checks that every key of n is one of fields and has a value
// of its kind; prefix names n's keys ("filesystem.").
func checkObject(n *jnode, fields []field, prefix string) error {
	for i, k := range n.keys {
		f, ok := lookupField(fields, k)
		if !ok {
			return fmt.Errorf("unknown policy field: %s", quoteOdd(prefix+k))
		}
		if err := checkValue(f, n.vals[i], prefix+k); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks that v has the kind of f; path names it.
func checkValue(f field, v *jnode, path string) error {
	want := func(what string) error { return fmt.Errorf("%s: want %s, not %s", path, what, v.typeName()) }
	str := func(s, at string) error {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("%s: contains a NUL byte", at)
		}
		return nil
	}
	switch f.kind {
	case kindString:
		if v.kind != 's' {
			return want("a string")
		}
		return str(v.str, path)
	case kindStrings:
		if v.kind != 'a' {
			return want("an array of strings")
		}
		if len(v.items) < f.minItems && path == "command" {
			return errors.New("missing command")
		}
		if len(v.items) < f.minItems {
			return fmt.Errorf("%s: want at least %d item(s)", path, f.minItems)
		}
		for i, it := range v.items {
			if it.kind != 's' {
				return fmt.Errorf("%s[%d]: want a string, not %s", path, i, it.typeName())
			}
			if err := str(it.str, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case kindBool:
		if v.kind != 'b' {
			return want("true or false")
		}
	case kindEnum:
		if v.kind != 's' {
			return want("a string: " + describeEnum(f.enum))
		}
		if !contains(f.enum, v.str) {
			return fmt.Errorf("%s %q: want %s", path, v.str, describeEnum(f.enum))
		}
	case kindObject:
		if v.kind != 'o' {
			return want("an object")
		}
		return checkObject(v, f.fields, path+".")
	case kindStringMap, kindEnumMap:
		if v.kind != 'o' {
			return want("an object")
		}
		for i, k := range v.keys {
			at := path + "." + k
			if err := str(k, path+" key "+strconv.Quote(k)); err != nil {
				return err
			}
			val := v.vals[i]
			if val.kind != 's' {
				return fmt.Errorf("%s: want a string, not %s", at, val.typeName())
			}
			if f.kind == kindEnumMap && !contains(f.enum, val.str) {
				return fmt.Errorf("%s %q: want %s", at, val.str, describeEnum(f.enum))
			}
			if f.kind == kindEnumMap {
				if err := str(val.str, at); err != nil {
					return err
				}
			}
		}
	case kindSize, kindCount, kindDuration:
		switch v.kind {
		case 'n':
			if _, err := wholeNumber(v.num, 0, 1<<63-1); err != nil {
				return fmt.Errorf("%s %s: %w", path, v.num, err)
			}
			if f.kind == kindDuration {
				if n, _ := wholeNumber(v.num, 0, 1<<63-1); n > int64(1<<63-1)/int64(time.Second) {
					return fmt.Errorf("%s %s: %w", path, v.num, ErrTooLarge)
				}
			}
		case 's':
			var err error
			switch f.kind {
			case kindSize:
				_, err = ParseSize(v.str)
			case kindCount:
				_, err = ParseCount(v.str)
			default:
				_, err = ParseDuration(v.str)
			}
			if err != nil {
				return fmt.Errorf("%s %q: %w", path, v.str, err)
			}
		default:
			return want("a number or a string")
		}
	case kindInteger:
		if v.kind != 'n' {
			return want("a whole number")
		}
		if _, err := wholeNumber(v.num, int64(f.min), int64(f.max)); err != nil {
			return fmt.Errorf("%s %s: %w", path, v.num, err)
		}
	}
	return nil
}

// wholeNumber reads a JSON number that must be a whole number in
// [lo, hi].
func wholeNumber(n json.Number, lo, hi int64) (int64, error) {
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		if strings.ContainsAny(string(n), ".eE") {
			return 0, errors.New("want a whole number, without a fraction or exponent")
		}
		return 0, ErrTooLarge
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("want %d through %d", lo, hi)
	}
	return v, nil
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// get returns the value of key in object n, or nil.
func (n *jnode) get(key string) *jnode {
	if n == nil {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// strings returns the items of an array of strings (checked), or nil.
func (n *jnode) strings() []string {
	if n == nil {
		return nil
	}
	out := make([]string, 0, len(n.items))
	for _, it := range n.items {
		out = append(out, it.str)
	}
	return out
}

// extract builds the Document of a checked tree, checking what the kinds
// alone do not: the values' own grammars and how fields combine.
func extract(root *jnode) (*Document, error) {
	d := &Document{}
	if e := root.get("enabled"); e != nil && !e.b {
		return nil, ErrPolicyDisabled
	}
	cmd := root.get("command")
	if cmd == nil {
		return nil, errors.New(`missing command: the policy needs "command", an array of strings`)
	}
	d.Command = cmd.strings()
	if d.Command[0] == "" {
		return nil, errors.New("command[0]: empty program name")
	}
	if c := root.get("cwd"); c != nil {
		if c.str == "" {
			return nil, errors.New("cwd: empty; leave it out for the current directory")
		}
		d.Cwd = c.str
	}
	if s := root.get("stdio"); s != nil {
		d.Stdio = s.str
	}
	if s := root.get("network"); s != nil {
		d.Network = s.str
	}
	if s := root.get("proc"); s != nil {
		d.Proc = s.str
	}
	for _, a := range []struct {
		key string
		dst *bool
	}{{"sshAgent", &d.SSHAgent}, {"gpgAgent", &d.GPGAgent}, {"ageAgent", &d.AgeAgent}} {
		if v := root.get(a.key); v != nil {
			*a.dst = v.b
		}
	}
	if err := d.extractEnv(root.get("env")); err != nil {
		return nil, err
	}
	if err := d.extractFilesystem(root.get("filesystem")); err != nil {
		return nil, err
	}
	if err := d.extractNetwork(root); err != nil {
		return nil, err
	}
	if g := root.get("grants"); g != nil {
		for i, p := range g.keys {
			if p == "" {
				return nil, errors.New(`grants "": empty path`)
			}
			var a moat.Access
			err := a.UnmarshalText([]byte(g.vals[i].str))
			if err != nil {
				return nil, fmt.Errorf("grants %q: %s", p, err.Error())
			}
			d.Grants = append(d.Grants, moat.PathRequest{Path: p, Access: a})
		}
	}
	if p := root.get("protections"); p != nil {
		idx := protectionIndex()
		o := reflect.ValueOf(&d.Protections).Elem()
		for i, k := range p.keys {
			b := p.vals[i].b
			o.Field(idx[k]).Set(reflect.ValueOf(&b))
		}
	}
	if s := root.get("isolation"); s != nil {
		var iso moat.Isolation
		err := iso.UnmarshalText([]byte(s.str))
		if err != nil {
			return nil, errors.New(err.Error())
		}
		d.Isolation = &iso
	}
	if err := d.extractLimits(root.get("limits")); err != nil {
		return nil, err
	}
	if s := root.get("enforcement"); s != nil {
		e := moat.Strict
		if s.str == "best-effort" {
			e = moat.BestEffort
		}
		d.Enforcement = &e
	}
	if b := root.get("build"); b != nil {
		v := b.b
		d.Build = &v
	}
	return d, nil
}

// extractEnv reads "env".
func (d *Document) extractEnv(n *jnode) error {
	if n == nil {
		return nil
	}
	allow, deny := n.get("allow"), n.get("deny")
	for _, name := range allow.strings() {
		if err := CheckEnvVar(EnvVar{Name: name}); err != nil {
			return fmt.Errorf("env.allow %q: %w", name, err)
		}
	}
	for _, name := range deny.strings() {
		if name == "" {
			return errors.New(`env.deny "": empty variable name`)
		}
	}
	d.Env.Allow = allow.strings()
	d.Env.Deny = deny.strings()
	d.Env.Blocklist = allow == nil && deny != nil
	if s := n.get("set"); s != nil {
		for i, name := range s.keys {
			e := EnvVar{Name: name, Value: s.vals[i].str, Set: true}
			if err := CheckEnvVar(e); err != nil {
				return fmt.Errorf("env.set %q: %w", name, err)
			}
			d.Env.Set = append(d.Env.Set, e)
		}
	}
	return nil
}

// extractFilesystem reads "filesystem".
func (d *Document) extractFilesystem(n *jnode) error {
	if n == nil {
		return nil
	}
	for _, key := range []string{"deny", "writable"} {
		for _, p := range n.get(key).strings() {
			if strings.TrimSpace(p) == "" {
				return fmt.Errorf("filesystem.%s: empty pattern", key)
			}
			// The syntax, here, so that validate finds it; where a
			// pattern lands is for the cwd, in Exec.
			if _, err := fspattern.Compile(p, fspattern.Options{Root: "/", Home: "/"}); err != nil {
				return fmt.Errorf("filesystem.%s: %s", key, err.Error())
			}
		}
	}
	d.Filesystem.Deny = n.get("deny").strings()
	d.Filesystem.Writable = n.get("writable").strings()
	if g := n.get("hardLinkGaps"); g != nil {
		d.Filesystem.HardLinkGaps = g.str
	}
	if v := n.get("virtual"); v != nil {
		d.Filesystem.Virtual = map[string]string{}
		for i, target := range v.keys {
			if !filepath.IsAbs(target) {
				return fmt.Errorf("filesystem.virtual target %q must be absolute", target)
			}
			clean := filepath.Clean(target)
			if clean == "/" {
				return errors.New("filesystem.virtual target / is the root directory")
			}
			if _, dup := d.Filesystem.Virtual[clean]; dup {
				return fmt.Errorf("filesystem.virtual target %q is given twice", target)
			}
			d.Filesystem.Virtual[clean] = v.vals[i].str
		}
	}
	return nil
}

// extractNetwork reads the network fields and checks how they combine
// where only a document can combine them: the host network runs no proxy,
// so nothing it would filter or record may be given with it.
func (d *Document) extractNetwork(root *jnode) error {
	for _, p := range root.get("allowDomains").strings() {
		s, err := ParseDomain(p)
		if err != nil {
			return fmt.Errorf("allowDomains %q: %w", p, err)
		}
		d.AllowDomains = append(d.AllowDomains, s)
	}
	for _, p := range root.get("allowLocal").strings() {
		s, err := ParseLocal(p)
		if err != nil {
			return fmt.Errorf("allowLocal %q: %w", p, err)
		}
		d.AllowLocal = append(d.AllowLocal, s)
	}
	if a := root.get("auditLog"); a != nil {
		if a.str == "" {
			return errors.New("auditLog: empty path")
		}
		d.AuditLog = a.str
	}
	if a := root.get("auditRotate"); a != nil {
		d.AuditRotate = a.str
	}
	if d.Network == NetworkHost {
		switch {
		case d.AllowDomains != nil:
			return errors.New(`allowDomains: needs network "allow-list"; the host network runs no proxy to filter`)
		case d.AllowLocal != nil:
			return errors.New(`allowLocal: needs network "allow-all" or "allow-list"; the host network runs no proxy`)
		case d.AuditLog != "":
			return errors.New(`auditLog: needs network "allow-all" or "allow-list"; the host network runs no proxy, so nothing would be recorded`)
		}
	}
	// The rest (an allow list without domains, an audit log without a
	// proxy) is checked by Merge, as for every front end.
	_, err := Merge(d.layer())
	if err != nil {
		return errors.New(err.Error())
	}
	return nil
}

// extractLimits reads "limits".
func (d *Document) extractLimits(n *jnode) error {
	if n == nil {
		return nil
	}
	l := &d.Limits
	for _, f := range []struct {
		key   string
		dst   **int64
		parse func(string) (int64, error)
	}{
		{"memory", &l.MemoryBytes, ParseSize},
		{"cpuTime", &l.CPUSeconds, ParseCount},
		{"fileSize", &l.FileSizeBytes, ParseSize},
		{"processes", &l.Processes, ParseCount},
		{"openFiles", &l.OpenFiles, ParseCount},
		{"disk", &l.DiskBytes, ParseSize},
		{"diskInodes", &l.DiskInodes, ParseCount},
	} {
		v := n.get(f.key)
		if v == nil {
			continue
		}
		var x int64
		if v.kind == 'n' {
			x, _ = wholeNumber(v.num, 0, 1<<63-1)
		} else {
			x, _ = f.parse(v.str)
		}
		*f.dst = &x
	}
	if v := n.get("timeout"); v != nil {
		var t time.Duration
		if v.kind == 'n' {
			secs, _ := wholeNumber(v.num, 0, 1<<63-1)
			t = time.Duration(secs) * time.Second
		} else {
			t, _ = ParseDuration(v.str)
		}
		l.Timeout = &t
	}
	if v := n.get("nice"); v != nil {
		x, _ := wholeNumber(v.num, 0, moat.MaxNice)
		nice := int(x)
		l.Nice = &nice
	}
	if v := n.get("ioPriority"); v != nil {
		p, err := ParseIOPriority(v.str)
		if err != nil {
			return fmt.Errorf("limits.ioPriority %q: %w", v.str, err)
		}
		l.IOPriority = &p
	}
	return nil
}
