package policy

import (
	"encoding/json"
	"reflect"

	"github.com/moat-sandbox/moat"
)

// MarshalJSON writes d as a policy document that [ParseDocument] reads
// back to d: every field that is set, sizes and counts as numbers (or
// "unlimited"), the timeout as a Go duration, names as the document spells
// them.
func (d *Document) MarshalJSON() ([]byte, error) {
	m := map[string]any{"command": d.Command}
	str := func(key, v string) {
		if v != "" {
			m[key] = v
		}
	}
	str("cwd", d.Cwd)
	str("stdio", d.Stdio)
	str("network", d.Network)
	str("proc", d.Proc)
	str("auditLog", d.AuditLog)
	str("auditRotate", d.AuditRotate)
	for key, v := range map[string]bool{"sshAgent": d.SSHAgent, "gpgAgent": d.GPGAgent, "ageAgent": d.AgeAgent} {
		if v {
			m[key] = true
		}
	}
	env := map[string]any{}
	if d.Env.Allow != nil || !d.Env.Blocklist && d.Env.Deny != nil {
		env["allow"] = nonNil(d.Env.Allow)
	}
	if d.Env.Deny != nil {
		env["deny"] = d.Env.Deny
	}
	if d.Env.Set != nil {
		var set orderedObject
		for _, e := range d.Env.Set {
			set = append(set, [2]string{e.Name, e.Value})
		}
		env["set"] = set
	}
	if len(env) > 0 {
		m["env"] = env
	}
	fs := map[string]any{}
	if d.Filesystem.Deny != nil {
		fs["deny"] = d.Filesystem.Deny
	}
	if d.Filesystem.Writable != nil {
		fs["writable"] = d.Filesystem.Writable
	}
	if d.Filesystem.Virtual != nil {
		fs["virtual"] = d.Filesystem.Virtual
	}
	if d.Filesystem.HardLinkGaps != "" {
		fs["hardLinkGaps"] = d.Filesystem.HardLinkGaps
	}
	if len(fs) > 0 {
		m["filesystem"] = fs
	}
	if d.AllowDomains != nil {
		m["allowDomains"] = d.AllowDomains
	}
	if d.AllowLocal != nil {
		m["allowLocal"] = d.AllowLocal
	}
	if d.Grants != nil {
		var g orderedObject
		for _, r := range d.Grants {
			g = append(g, [2]string{r.Path, r.Access.String()})
		}
		m["grants"] = g
	}
	prot := map[string]bool{}
	v := reflect.ValueOf(d.Protections)
	for name, i := range protectionIndex() {
		if p := v.Field(i); !p.IsNil() {
			prot[name] = p.Elem().Bool()
		}
	}
	if len(prot) > 0 {
		m["protections"] = prot
	}
	if d.Isolation != nil {
		m["isolation"] = d.Isolation.String()
	}
	if lim := d.Limits.encode(); len(lim) > 0 {
		m["limits"] = lim
	}
	if d.Enforcement != nil {
		m["enforcement"] = d.Enforcement.String()
	}
	if d.Build != nil {
		m["build"] = *d.Build
	}
	return json.Marshal(m)
}

// encode writes the limits as a document's "limits" object.
func (l *Limits) encode() map[string]any {
	m := map[string]any{}
	num := func(key string, v *int64) {
		switch {
		case v == nil:
		case *v < 0:
			m[key] = Unlimited
		default:
			m[key] = *v
		}
	}
	num("memory", l.MemoryBytes)
	num("cpuTime", l.CPUSeconds)
	num("fileSize", l.FileSizeBytes)
	num("processes", l.Processes)
	num("openFiles", l.OpenFiles)
	num("disk", l.DiskBytes)
	num("diskInodes", l.DiskInodes)
	if l.Timeout != nil {
		m["timeout"] = l.Timeout.String()
	}
	if l.Nice != nil {
		m["nice"] = *l.Nice
	}
	if l.IOPriority != nil && *l.IOPriority != moat.IOPriorityDefault {
		m["ioPriority"] = l.IOPriority.String()
	}
	return m
}

// orderedObject is a JSON object of strings that keeps its keys' order.
type orderedObject [][2]string

// MarshalJSON writes the object with its keys in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, kv := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(kv[0])
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(kv[1])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
