package policy

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/moat-sandbox/moat"
)

// checker turns a decoded file into a Layer, checking every value and
// naming the line of each mistake.
type checker struct {
	name  string    // the file's name, for errors
	lines lineIndex // the line of each key
	dir   string    // the file's absolute directory
	home  string    // $HOME, for ~/
}

// fail returns an *Error at the line of the key path, for a message that
// starts with the key.
func (c *checker) fail(path []string, format string, args ...any) error {
	return &Error{File: c.name, Line: c.lines.line(path...), Err: fmt.Errorf(format, args...)}
}

// layer checks raw and returns its settings.
func (c *checker) layer(raw *rawFile) (Layer, error) {
	var l Layer
	var err error
	if l.Network, err = c.choice([]string{"network"}, raw.Network, ParseNetworkMode); err != nil {
		return l, err
	}
	if l.AllowDomains, err = c.list([]string{"allow-domains"}, raw.AllowDomains, ParseDomain); err != nil {
		return l, err
	}
	if l.AllowLocal, err = c.list([]string{"allow-local"}, raw.AllowLocal, ParseLocal); err != nil {
		return l, err
	}
	if l.AuditLog, err = c.path([]string{"audit-log"}, raw.AuditLog); err != nil {
		return l, err
	}
	if l.AuditRotate, err = c.choice([]string{"audit-rotate"}, raw.AuditRotate, ParseAuditRotate); err != nil {
		return l, err
	}
	if raw.Isolation != nil {
		s, err := c.str([]string{"isolation"}, raw.Isolation)
		if err != nil {
			return l, err
		}
		var iso moat.Isolation
		if err := iso.UnmarshalText([]byte(s)); err != nil {
			return l, c.fail([]string{"isolation"}, "%s", err.Error())
		}
		l.Isolation = &iso
	}
	if l.Security, err = c.security(raw.Security); err != nil {
		return l, err
	}
	if l.Grants, err = c.grants(raw.Grants); err != nil {
		return l, err
	}
	if l.Limits, err = c.limits(raw.Limits); err != nil {
		return l, err
	}
	if raw.WorkDir != nil {
		if l.WorkDir, err = c.path([]string{"workdir", "path"}, raw.WorkDir.Path); err != nil {
			return l, err
		}
		if l.KeepWorkDir, err = c.optBool([]string{"workdir", "keep"}, raw.WorkDir.Keep); err != nil { // heel.go
			return l, err
		}
	}
	if raw.Home != nil {
		if l.Home, err = c.path([]string{"home"}, raw.Home); err != nil {
			return l, err
		}
	}
	if l.Env, err = c.env(raw.Env); err != nil {
		return l, err
	}
	if l.Build, err = c.build(raw.Build); err != nil {
		return l, err
	}
	if l.Python, err = c.python(raw.Python); err != nil { // python.go
		return l, err
	}
	return l, nil
}

// security checks [security].
func (c *checker) security(raw *rawSecurity) (moat.SecurityOverrides, error) {
	var o moat.SecurityOverrides
	if raw == nil {
		return o, nil
	}
	if err := c.keychainAlias(raw); err != nil { // heel.go
		return o, err
	}
	for _, f := range []struct {
		key string
		v   any
		dst **bool
	}{
		{"protect-user-home", raw.ProtectUserHome, &o.ProtectUserHome},
		{"protect-credentials", raw.ProtectCredentials, &o.ProtectCredentials},
		{"protect-cloud-config", raw.ProtectCloudConfig, &o.ProtectCloudConfig},
		{"protect-browser-data", raw.ProtectBrowserData, &o.ProtectBrowserData},
		{"protect-keychains", raw.ProtectKeychains, &o.ProtectKeychains},
		{"allow-gpu", raw.AllowGPU, &o.AllowGPU},
		{"protect-shell-history", raw.ProtectShellHistory, &o.ProtectShellHistory},
		{"protect-package-credentials", raw.ProtectPackageCredentials, &o.ProtectPackageCredentials},
		{"allow-npu", raw.AllowNPU, &o.AllowNPU},
		{"allow-hardware", raw.AllowHardware, &o.AllowHardware},
		{"allow-tcc-prompts", raw.AllowTCCPrompts, &o.AllowTCCPrompts},
		{"protect-keychain", raw.ProtectKeychain, &o.ProtectKeychains}, // heel's spelling
	} {
		if f.v == nil {
			continue
		}
		b, ok := f.v.(bool)
		if !ok {
			return o, c.fail([]string{"security", f.key}, "security.%s: want true or false, not %s", f.key, typeName(f.v))
		}
		*f.dst = &b
	}
	return o, nil
}

// grants checks [grants], in the file's order.
func (c *checker) grants(raw map[string]any) ([]moat.PathRequest, error) {
	var out []moat.PathRequest
	for _, p := range c.inOrder("grants", raw) {
		key := []string{"grants", p}
		s, ok := raw[p].(string)
		if !ok {
			hint := ""
			if _, table := raw[p].(map[string]any); table {
				hint = `; quote a path that holds a dot, like "./target"`
			}
			return nil, c.fail(key, "grants %q: want a mode r, rw, rx or rwx, not %s%s", p, typeName(raw[p]), hint)
		}
		var a moat.Access
		err := a.UnmarshalText([]byte(s))
		if err != nil {
			return nil, c.fail(key, "grants %q: %s", p, err.Error())
		}
		abs, err := c.expand(p)
		if err != nil {
			return nil, c.fail(key, "grants %q: %v", p, err)
		}
		out = append(out, moat.PathRequest{Path: abs, Access: a})
	}
	return out, nil
}

// limits checks [limits].
func (c *checker) limits(raw *rawLimits) (Limits, error) {
	var l Limits
	if raw == nil {
		return l, nil
	}
	for _, f := range []struct {
		key   string
		v     any
		dst   **int64
		parse func(string) (int64, error)
		want  string
	}{
		{"max-memory", raw.MaxMemory, &l.MemoryBytes, ParseSize, "a size like 512M, a number of bytes, or \"unlimited\""},
		{"max-cpu-time", raw.MaxCPUTime, &l.CPUSeconds, ParseCount, `seconds, or "unlimited"`},
		{"max-file-size", raw.MaxFileSize, &l.FileSizeBytes, ParseSize, "a size like 1G, a number of bytes, or \"unlimited\""},
		{"max-processes", raw.MaxProcesses, &l.Processes, ParseCount, `a whole number or "unlimited"`},
		{"max-open-files", raw.MaxOpenFiles, &l.OpenFiles, ParseCount, `a whole number or "unlimited"`},
		{"max-disk", raw.MaxDisk, &l.DiskBytes, ParseSize, "a size like 10G, a number of bytes, or \"unlimited\""},
		{"max-disk-inodes", raw.MaxDiskInodes, &l.DiskInodes, ParseCount, `a whole number or "unlimited"`},
	} {
		if f.v == nil {
			continue
		}
		key := []string{"limits", f.key}
		var n int64
		switch v := f.v.(type) {
		case int64:
			if v < 0 {
				return l, c.fail(key, "limits.%s %d: negative; want %s", f.key, v, f.want)
			}
			n = v
		case string:
			var err error
			if n, err = f.parse(v); err != nil {
				return l, c.fail(key, "limits.%s %q: %v", f.key, v, err)
			}
		default:
			return l, c.fail(key, "limits.%s: want %s, not %s", f.key, f.want, typeName(f.v))
		}
		*f.dst = &n
	}
	if raw.Timeout != nil {
		key := []string{"limits", "timeout"}
		var d time.Duration
		switch v := raw.Timeout.(type) {
		case string:
			var err error
			if d, err = ParseDuration(v); err != nil {
				return l, c.fail(key, "limits.timeout %q: %v", v, err)
			}
		case int64:
			if v < 0 || v > int64(1<<63-1)/int64(time.Second) {
				return l, c.fail(key, "limits.timeout %d: want a duration like \"30s\", or whole seconds", v)
			}
			d = time.Duration(v) * time.Second
		default:
			return l, c.fail(key, "limits.timeout: want a duration like \"30s\", not %s", typeName(raw.Timeout))
		}
		l.Timeout = &d
	}
	if raw.Nice != nil {
		key := []string{"limits", "nice"}
		v, ok := raw.Nice.(int64)
		if !ok {
			return l, c.fail(key, "limits.nice: %v, not %s", errNice, typeName(raw.Nice))
		}
		if err := niceProblem(v); err != nil {
			return l, c.fail(key, "limits.nice %d: %v", v, err)
		}
		n := int(v)
		l.Nice = &n
	}
	if raw.IOPriority != nil {
		key := []string{"limits", "io-priority"}
		s, err := c.str(key, raw.IOPriority)
		if err != nil {
			return l, err
		}
		p, err := ParseIOPriority(s)
		if err != nil {
			return l, c.fail(key, "limits.io-priority %q: %v", s, err)
		}
		l.IOPriority = &p
	}
	return l, nil
}

// env checks [env].
func (c *checker) env(raw *rawEnv) ([]EnvVar, error) {
	if raw == nil {
		return nil, nil
	}
	var out []EnvVar
	names, err := c.list([]string{"env", "passthrough"}, raw.Passthrough, func(s string) (string, error) {
		return s, CheckEnvVar(EnvVar{Name: s})
	})
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		out = append(out, EnvVar{Name: n})
	}
	for _, name := range c.inOrder("env"+keySep+"set", raw.Set) {
		key := []string{"env", "set", name}
		v, ok := raw.Set[name].(string)
		if !ok {
			return nil, c.fail(key, "env.set %q: want a string, not %s", name, typeName(raw.Set[name]))
		}
		e := EnvVar{Name: name, Value: v, Set: true}
		if err := CheckEnvVar(e); err != nil {
			return nil, c.fail(key, "env.set %q: %v", name, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// inOrder returns the keys of table m, found under prefix in the index, in
// the order of their lines (then by name).
func (c *checker) inOrder(prefix string, m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	line := func(k string) int { return c.lines[prefix+keySep+k] }
	sort.Slice(keys, func(i, j int) bool {
		if li, lj := line(keys[i]), line(keys[j]); li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// str returns v as a string, or an error if it is something else.
func (c *checker) str(path []string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", c.fail(path, "%s: want a string, not %s", strings.Join(path, "."), typeName(v))
	}
	return s, nil
}

// choice checks an optional string with parse; absent gives "".
func (c *checker) choice(path []string, v any, parse func(string) (string, error)) (string, error) {
	if v == nil {
		return "", nil
	}
	s, err := c.str(path, v)
	if err != nil {
		return "", err
	}
	out, err := parse(s)
	if err != nil {
		return "", c.fail(path, "%s %q: %v", strings.Join(path, "."), s, err)
	}
	return out, nil
}

// list checks an optional array of strings, each with parse.
func (c *checker) list(path []string, v any, parse func(string) (string, error)) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	key := strings.Join(path, ".")
	items, ok := v.([]any)
	if !ok {
		return nil, c.fail(path, "%s: want an array of strings, not %s", key, typeName(v))
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, c.fail(path, "%s: want an array of strings, not one holding %s", key, typeName(it))
		}
		p, err := parse(s)
		if err != nil {
			return nil, c.fail(path, "%s %q: %v", key, s, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// path checks an optional path and makes it absolute.
func (c *checker) path(key []string, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	s, err := c.str(key, v)
	if err != nil {
		return "", err
	}
	abs, err := c.expand(s)
	if err != nil {
		return "", c.fail(key, "%s %q: %v", strings.Join(key, "."), s, err)
	}
	return abs, nil
}

// typeName describes a decoded TOML value for an error message.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case nil:
		return "nothing"
	}
	return "a date or time"
}
