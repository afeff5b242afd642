package moat

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/size"
)

// MaxNice is the largest [Config.Nice]: 19 steps lower, the lowest
// priority there is.
const MaxNice = 19

// Validate checks what can be checked of c without looking at the host:
// Nice is 0 through [MaxNice] (priority is only ever lowered); IOPriority,
// Isolation and Enforcement are values moat defines; each Env.Set entry is
// NAME=VALUE with a name and each Env.Passthrough entry a bare name;
// AllowLocal holds valid prefixes; KeepCaches has a WorkDir and no Home;
// Deny, ReadOnly, Seal, VirtualFiles and Sockets name absolute, clean
// paths, and the virtual files' contents fit in 64 KiB; each grant has a
// valid, non-empty access and an absolute, clean path; and each limit,
// when set, is at least its least value ([MinOpenFiles], [MinMemoryBytes]
// and the others below). It does no I/O: whether paths exist,
// are safe places and stay what they were is for [New], [CheckWorkDir]
// and [ResolvePaths]. A field it refuses is a [*ConfigError], except a
// bad AllowLocal prefix, a bad socket path and virtual files too large.
// [New] calls it first; a front end that builds a Config calls it to
// refuse a mistake before anything is created. The checks are one list,
// configChecks.
func (c Config) Validate() error {
	for _, v := range configChecks {
		if err := v.check(&c); err != nil {
			return err
		}
	}
	return nil
}

// configChecks are every check of a Config that needs no host, in the
// order Validate runs them: one flat list, each named after what it
// checks, as runc's validate package has it. Whatever reads the host is
// done later, in New's preparation (backend.go: readHost).
var configChecks = []struct {
	name  string
	check func(*Config) error
}{
	{"nice", checkNice},
	{"io priority", checkIOPriority},
	{"isolation", checkIsolation},
	{"enforcement", checkEnforcement},
	{"keep caches", checkKeepCaches},
	{"env", checkEnv},
	{"allow local", checkNetworkConfig},             // network.go
	{"filesystem policy", validateFilesystemPolicy}, // filesystem_spec.go
	{"virtual files", virtualBytes},                 // filesystem_spec.go
	{"sockets", checkSockets},
	{"ipc", func(c *Config) error { return validateIPC(c.IPC) }},     // ipc_sandbox.go
	{"python", func(c *Config) error { return c.Python.validate() }}, // python_sandbox.go
	{"grants", checkGrants},
	{"limits", func(c *Config) error { return checkLimitMinimums(c.Limits) }},
	{"open files", func(c *Config) error { return checkOpenFiles(c.Limits.OpenFiles) }},
}

func checkNice(c *Config) error {
	if c.Nice < 0 || c.Nice > MaxNice {
		return &ConfigError{Field: "nice", Value: strconv.Itoa(c.Nice), Problem: "want 0 (unchanged) through " + strconv.Itoa(MaxNice) + "; priority can only be lowered"}
	}
	return nil
}

func checkIOPriority(c *Config) error {
	if c.IOPriority < IOPriorityDefault || c.IOPriority > IOPriorityBackground {
		return &ConfigError{Field: "io priority", Value: strconv.Itoa(int(c.IOPriority)), Problem: "unknown"}
	}
	return nil
}

func checkIsolation(c *Config) error {
	if c.Isolation < IsolationStrict || c.Isolation > IsolationPermissive {
		return &ConfigError{Field: "isolation", Value: strconv.Itoa(int(c.Isolation)), Problem: "unknown"}
	}
	return nil
}

func checkEnforcement(c *Config) error {
	if c.Enforcement != Strict && c.Enforcement != BestEffort {
		return &ConfigError{Field: "enforcement", Value: strconv.Itoa(int(c.Enforcement)), Problem: "unknown"}
	}
	return nil
}

func checkKeepCaches(c *Config) error {
	if c.KeepCaches && c.Home != "" {
		return settingError("home", &ConfigError{Field: "keep caches", Value: "true", Problem: "excludes a kept home, Config.Home, which keeps all of itself; drop one"})
	}
	if c.KeepCaches && c.WorkDir == "" {
		return settingError("workdir", &ConfigError{Field: "keep caches", Value: "true", Problem: "needs a working directory, Config.WorkDir: a fresh one has no project to keep caches for"})
	}
	return nil
}

func checkEnv(c *Config) error {
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
	return nil
}

// checkSockets checks that each of Config.Sockets is absolute and clean;
// New checks the files themselves (backend.go: socketGrants).
func checkSockets(c *Config) error {
	for _, p := range c.Sockets {
		if !isAbsClean(p) {
			return errorf("socket %q: path must be absolute and clean", p)
		}
	}
	return nil
}

func checkGrants(c *Config) error {
	for _, g := range c.Grants {
		if g.Access == 0 || g.Access&^(READ|WRITE|EXEC) != 0 {
			return &ConfigError{Field: "grant", Value: strconv.Quote(g.Path), Problem: "invalid access " + strconv.Itoa(int(g.Access))}
		}
		if !filepath.IsAbs(g.Path) || filepath.Clean(g.Path) != g.Path {
			return &ConfigError{Field: "grant", Value: strconv.Quote(g.Path), Problem: "path must be absolute and clean"}
		}
	}
	return nil
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

// The least value each limit accepts, when set (a positive value). Below
// them not even a trivial command starts (measured: `sh -c 'ls | cat'`
// and `python3 -c 'print(1)'`), or the limit means nothing a person could
// want; Validate refuses such a value as a [*ConfigError] that names the
// least one. Zero keeps the default and a negative value is unlimited,
// as for every limit.
const (
	// MinMemoryBytes is the least Limits.MemoryBytes: 16 MiB, what a
	// Python interpreter needs to start.
	MinMemoryBytes = 16 << 20
	// MinProcesses is the least Limits.Processes: the sandbox's own init
	// and helper threads count against it; 14 let `sh -c 'ls | cat'`
	// run, 16 leave room.
	MinProcesses = 16
	// MinFileSizeBytes is the least Limits.FileSizeBytes: 1 KiB.
	MinFileSizeBytes = 1 << 10
	// MinDiskBytes is the least Limits.DiskBytes: 1 MiB, so that the
	// disk watch's measure of free space (whole blocks, and what the file
	// system itself moves) is small against it.
	MinDiskBytes = 1 << 20
	// MinDiskInodes is the least Limits.DiskInodes: 16 files and
	// directories.
	MinDiskInodes = 16
	// MinCPUSeconds is the least Limits.CPUSeconds: one second.
	MinCPUSeconds = 1
)

// MinOpenFiles is the smallest [Limits.OpenFiles] a sandbox accepts: below
// it the sandbox's helper and init cannot hold the descriptors they need
// (standard streams, the command's pipes, their own control sockets).
const MinOpenFiles = 32

// limitMinimum is one limit's least value and how its message names it.
type limitMinimum struct {
	field string // the *ConfigError's Field
	value int64
	least int64
	size  bool // a byte count, shown with its unit
}

// checkLimitMinimums refuses a positive limit below its least value; zero
// (the default) and negative values (unlimited) pass. Open files have
// their own check (checkOpenFiles).
func checkLimitMinimums(l Limits) error {
	for _, m := range []limitMinimum{
		{"limits: memory", l.MemoryBytes, MinMemoryBytes, true},
		{"limits: processes", l.Processes, MinProcesses, false},
		{"limits: file size", l.FileSizeBytes, MinFileSizeBytes, true},
		{"limits: disk", l.DiskBytes, MinDiskBytes, true},
		{"limits: disk inodes", l.DiskInodes, MinDiskInodes, false},
		{"limits: cpu time", l.CPUSeconds, MinCPUSeconds, false},
	} {
		if m.value > 0 && m.value < m.least {
			least := strconv.FormatInt(m.least, 10)
			if m.size {
				least = sizeWords(m.least)
			}
			return &ConfigError{Field: m.field, Value: strconv.FormatInt(m.value, 10), Problem: "below the least that lets a command start; want at least " + least + ", or unlimited"}
		}
	}
	return nil
}

// sizeWords spells a least size the way the flags take it, with the
// bytes: "16M (16777216 bytes)"; a count no suffix divides is "N bytes".
func sizeWords(n int64) string {
	bytes := strconv.FormatInt(n, 10)
	if s := size.Format(n); s != bytes {
		return s + " (" + bytes + " bytes)"
	}
	return bytes + " bytes"
}
