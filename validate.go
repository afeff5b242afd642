package moat

import (
	"path/filepath"
	"strconv"
	"strings"
)

// MaxNice is the largest [Config.Nice]: 19 steps lower, the lowest
// priority there is.
const MaxNice = 19

// Validate checks what can be checked of c without looking at the host:
// Nice is 0 through [MaxNice] (priority is only ever lowered); IOPriority,
// Isolation and Enforcement are values moat defines; each Env.Set entry is
// NAME=VALUE with a name and each Env.Passthrough entry a bare name;
// AllowLocal holds valid prefixes; KeepCaches has a WorkDir and no Home;
// each grant has a valid, non-empty
// access and an absolute, clean path; and each limit, when set, is at
// least its least value ([MinOpenFiles], [MinMemoryBytes] and the others
// in limits_min.go). It does no I/O: whether paths exist, are safe
// places and stay what they were is for [New], [CheckWorkDir] and
// [ResolvePaths]. A field it refuses is a [*ConfigError], except a bad
// AllowLocal prefix. [New] calls it first; a front end that builds a
// Config calls it to refuse a mistake before anything is created.
func (c Config) Validate() error {
	if c.Nice < 0 || c.Nice > MaxNice {
		return &ConfigError{Field: "nice", Value: strconv.Itoa(c.Nice), Problem: "want 0 (unchanged) through " + strconv.Itoa(MaxNice) + "; priority can only be lowered"}
	}
	if c.IOPriority < IOPriorityDefault || c.IOPriority > IOPriorityBackground {
		return &ConfigError{Field: "io priority", Value: strconv.Itoa(int(c.IOPriority)), Problem: "unknown"}
	}
	if c.Isolation < IsolationStrict || c.Isolation > IsolationPermissive {
		return &ConfigError{Field: "isolation", Value: strconv.Itoa(int(c.Isolation)), Problem: "unknown"}
	}
	if c.Enforcement != Strict && c.Enforcement != BestEffort {
		return &ConfigError{Field: "enforcement", Value: strconv.Itoa(int(c.Enforcement)), Problem: "unknown"}
	}
	if c.KeepCaches && c.Home != "" {
		return &ConfigError{Field: "keep caches", Value: "true", Problem: "excludes a kept home (Home, --home), which keeps all of itself; drop one"}
	}
	if c.KeepCaches && c.WorkDir == "" {
		return &ConfigError{Field: "keep caches", Value: "true", Problem: "needs a WorkDir (--workdir): a fresh working directory has no project to keep caches for"}
	}
	for _, kv := range c.Env.Set {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return &ConfigError{Field: "env", Value: strconv.Quote(kv), Problem: "want NAME=VALUE"}
		}
	}
	for _, k := range c.Env.Passthrough {
		if k == "" || strings.Contains(k, "=") {
			return &ConfigError{Field: "env passthrough", Value: strconv.Quote(k), Problem: "want a variable name"}
		}
	}
	if err := checkNetworkConfig(&c); err != nil {
		return err
	}
	if err := validateFilesystemPolicy(&c); err != nil { // filesystem_policy.go
		return err
	}
	if err := validateIPC(c.IPC); err != nil { // ipc_sandbox.go
		return err
	}
	if err := c.Python.validate(); err != nil { // python.go
		return err
	}
	for _, g := range c.Grants {
		if g.Access == 0 || g.Access&^(READ|WRITE|EXEC) != 0 {
			return &ConfigError{Field: "grant", Value: strconv.Quote(g.Path), Problem: "invalid access " + strconv.Itoa(int(g.Access))}
		}
		if !filepath.IsAbs(g.Path) || filepath.Clean(g.Path) != g.Path {
			return &ConfigError{Field: "grant", Value: strconv.Quote(g.Path), Problem: "path must be absolute and clean"}
		}
	}
	if err := checkLimitMinimums(c.Limits); err != nil { // limits_min.go
		return err
	}
	return checkOpenFiles(c.Limits.OpenFiles)
}

// checkOpenFiles refuses an open-file limit below MinOpenFiles; zero (the
// default) passes. New checks the defaulted value again, since the host's
// hard limit may be lower.
func checkOpenFiles(n int64) error {
	if n > 0 && n < MinOpenFiles {
		return &ConfigError{Field: "limits: open files", Value: strconv.FormatInt(n, 10), Problem: "too few for the sandbox's helper and the command's standard streams; want at least " + strconv.Itoa(MinOpenFiles)}
	}
	return nil
}
