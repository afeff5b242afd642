package policy

import (
	"time"

	"github.com/moat-sandbox/moat"
)

// Layer is one source of settings, such as a config file or the command
// line, before it is merged with the others. Every field's zero value means
// "not given here", so a later layer overrides only what it sets. Values
// are checked where they are read (by [Parse], or by each flag); [Merge]
// checks how they combine.
type Layer struct {
	// Source names the layer in error messages. Nil names keys as the
	// config file spells them, with no location.
	Source Source

	// Isolation, when set, is the isolation level.
	Isolation *moat.Isolation
	// Security switches single protections on or off over the isolation
	// level's preset.
	Security moat.SecurityOverrides

	// Network, when not empty, is NetworkDeny, NetworkAllowAll or
	// NetworkAllowList.
	Network string
	// AllowDomains adds normalized allow-list patterns (see [ParseDomain]).
	AllowDomains []string
	// AllowLocal adds canonical prefixes (see [ParseLocal]).
	AllowLocal []string
	// AuditLog, when not empty, is the audit log's path.
	AuditLog string
	// AuditRotate, when not empty, is RotateDaily.
	AuditRotate string

	// Grants adds paths with their access, as written (relative paths are
	// relative to the current directory); not yet resolved.
	Grants []moat.PathRequest
	// WorkDir, when not empty, is the working directory as written.
	WorkDir string
	// KeepWorkDir, when set, says whether a fresh working directory is
	// kept after the sandbox (heel's [workdir] keep): see
	// [Result.KeepWorkDir].
	KeepWorkDir *bool
	// Home, when not empty, is the kept home (see [moat.Config.Home]) as
	// written, relative paths already made absolute.
	Home string
	// Env adds environment entries, applied in order.
	Env []EnvVar
	// Limits sets resource limits and priorities.
	Limits Limits
	// Build, when set, turns build mode on or off: see [moat.Config.Build].
	Build *bool
	// Enforcement, when set, is the enforcement mode: see
	// [moat.Config.Enforcement].
	Enforcement *moat.Enforcement
	// AllowHomeWorkDir, when set, lets the working directory be a home or
	// refuses it: see [moat.Config.AllowHomeWorkDir].
	AllowHomeWorkDir *bool
	// Sockets adds host Unix sockets the sandbox may connect to, as
	// written (see [moat.Config.Sockets]); not yet resolved.
	Sockets []string
	// Python is how moat python builds and uses its venv (python.go).
	Python Python
}

// Limits is the resource settings of a layer. A nil field is not set; a
// set one follows the meaning of the matching field of [moat.Limits] or
// [moat.Config]: zero for moat's default, -1 for no limit.
type Limits struct {
	// MemoryBytes is max-memory.
	MemoryBytes *int64
	// CPUSeconds is max-cpu-time.
	CPUSeconds *int64
	// FileSizeBytes is max-file-size.
	FileSizeBytes *int64
	// Processes is max-processes.
	Processes *int64
	// OpenFiles is max-open-files.
	OpenFiles *int64
	// DiskBytes is max-disk.
	DiskBytes *int64
	// DiskInodes is max-disk-inodes.
	DiskInodes *int64
	// Timeout is the wall-clock limit; zero means none.
	Timeout *time.Duration
	// Nice is the number of steps, 0 to 19, by which CPU priority drops.
	Nice *int
	// IOPriority is the disk priority.
	IOPriority *moat.IOPriority
}

// Source tells error messages where a layer's settings came from. Keys are
// the config file's, dotted for tables: "network", "workdir.path". A nil
// Source names no place.
type Source interface {
	// Key spells key as the user wrote it in this source: "allow-domains"
	// in a file, "--allow-domain" on the command line.
	Key(key string) string
	// At returns where key was given, such as `config "moat.toml": line
	// 3`, or "" when the spelled key says it all.
	At(key string) string
}

// spell returns how the layer's source spells key.
func (l *Layer) spell(key string) string {
	if l.Source == nil {
		return key
	}
	return l.Source.Key(key)
}

// at returns the location prefix of key in l, with its ": ", or "".
func (l *Layer) at(key string) string {
	if l.Source == nil {
		return ""
	}
	if at := l.Source.At(key); at != "" {
		return at + ": "
	}
	return ""
}
