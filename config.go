package moat

import (
	"context"
	"net/netip"
	"time"

	"github.com/moat-sandbox/moat/ipc"
)

// Config is the policy of a [Sandbox]. The zero value is the strictest useful
// policy: a fresh private working directory, system paths readable and
// executable, no network, the default [Limits], and [Strict] enforcement.
type Config struct {
	// WorkDir is the sandbox's working directory, always readable and
	// writable and never executable. Empty means a fresh directory with a
	// random name and mode 0700 is created under the system temporary
	// directory and removed by [Sandbox.Close]. A supplied directory must
	// exist and is kept.
	WorkDir string

	// AllowHomeWorkDir lets WorkDir be a home directory, a directory that
	// holds one, a home's control place (~/.local/bin, ~/.config, ~/.ssh)
	// or a directory holding one, or one that holds a directory of PATH:
	// places whose files run later outside the sandbox, which [New] refuses
	// by default (see [CheckWorkDir]). False refuses them.
	AllowHomeWorkDir bool

	// Home is the sandbox's HOME, kept across sandboxes so that caches
	// (go-build, npm, pip) survive between runs: writable and never
	// executable, like the working directory. It must exist, and must not
	// be your real home, hold it, be one of its control places
	// (~/.local/bin, ~/.config, ...) or lie inside the working directory;
	// every sandbox given it shares what the others wrote there. Empty, the
	// zero value, means a fresh private home, removed by [Sandbox.Close].
	// Either way HOME is never the working directory.
	Home string

	// KeepCaches keeps the fresh home's cache directories, and only them,
	// between runs of the same project and policy: the Go build and
	// module caches (~/.cache/go-build, ~/go/pkg/mod), npm's
	// ~/.npm/_cacache, pip's ~/.cache/pip and cargo's ~/.cargo/registry.
	// Each is a store under $XDG_CACHE_HOME/moat/homes (or
	// ~/.cache/moat/homes), linked from its usual place in the home,
	// writable and never executable. Nothing else of the home survives:
	// a run cannot leave a .gitconfig, .npmrc, pip.conf, cargo config or
	// shell rc file for a later one. The stores belong to the working
	// directory (its path and identity) and a digest of everything that
	// changes what a run may reach (isolation, protections, network,
	// grants, sockets, environment, build mode, Python, IPC, file-system
	// rules), so a run with another policy, say a token in its
	// environment, never shares them. A second run of the same key while
	// one holds it gets a throwaway home, as does a run whose stores
	// cannot be made (no usable cache directory) or would lie in
	// the working directory. Close bounds the stores' age
	// and total size. It needs WorkDir and excludes Home; a custom
	// network policy or Resolver cannot be digested and is an error. On
	// Windows it keeps nothing. False, the zero value, gives each
	// sandbox a fresh home, removed by [Sandbox.Close].
	KeepCaches bool

	// Grants lists paths outside the working directory and the system
	// baseline that the sandbox may use. Nil means none. A grant whose path
	// does not exist is an error from [New].
	Grants []Grant

	// Sockets lists host Unix socket files (absolute, clean paths) the
	// sandbox may connect to. Nil means none. On Linux with namespaces,
	// connect() and sends to path Unix sockets are supervised: besides
	// these, only sockets the sandbox bound itself are reachable, wherever
	// a host socket appears (the working directory, a grant, the home's
	// curated entries), even after the start. Each must exist and be a
	// socket when [New] runs; it becomes visible to the sandbox, and
	// [Sandbox.Report] lists how many there are.
	Sockets []string

	// Env is the environment that every command starts from. Its zero value
	// passes only a small set of harmless host variables (see [Env]).
	Env Env

	// Limits bounds the resources of each command's process tree. The zero
	// value applies the defaults described on [Limits].
	Limits Limits

	// Nice lowers the scheduling priority of the sandbox by that many steps,
	// like nice -n. Valid values are 0 (unchanged) through 19.
	Nice int

	// IOPriority lowers the disk priority of the sandbox. The zero value
	// leaves it unchanged.
	IOPriority IOPriority

	// Enforcement says what to do when the host cannot enforce part of the
	// policy. The zero value, [Strict], makes that an error.
	Enforcement Enforcement

	// Isolation is how much of the host the sandbox sees besides its
	// working directory and grants. The zero value is [IsolationStrict].
	Isolation Isolation

	// Security switches the protections of the user's secrets and device
	// access (GPU, NPU, hardware). Nil means the preset of the isolation
	// level, [Isolation.Security]: every protection on, no device class.
	Security *SecurityConfig

	// Network decides which hosts the sandbox may connect to, through a
	// proxy on the host. Nil means [DenyAll]: no proxy, no network.
	Network NetworkPolicy

	// AllowLocal lists local destinations, such as a development server on
	// 127.0.0.1, that the proxy may connect to although it refuses
	// loopback, private, link-local and similar addresses otherwise. The
	// policy must still allow the request. Nil means none.
	AllowLocal []netip.Prefix

	// DenyTCPConnect lists TCP ports on this host that no command may
	// connect to, nor bind, even under [HostNetwork]: a server's own
	// port, such as `moat serve`'s, which a command could otherwise
	// reach, or take on another address ([::1], 127.0.0.2) and meet the
	// server's clients there. With a network namespace the host's ports
	// are out of reach anyway and a bind lands in the sandbox's own
	// namespace; on the host's network stack Linux's Landlock (ABI 4)
	// denies connect and bind, on any address, since it tells ports
	// apart, not addresses. Landlock does not see the kernel's choice of
	// an ephemeral port (a bind to port 0, a listen on an unbound
	// socket), so a listed port inside the host's ephemeral range can
	// still be taken that way. A host that cannot enforce it fails [New]
	// under [Strict] (an [*UnsupportedError]) and reports a gap under
	// [BestEffort]; macOS and Windows cannot yet. Port 0 and the policy
	// proxy's port are refused. Nil (the zero value) denies none beyond
	// the network policy.
	DenyTCPConnect []uint16

	// Resolver answers the proxy's name lookups, so an embedder can pin
	// names (a split-horizon or DNS-over-HTTPS resolver, a test's fixed
	// answers). Every answer still meets the policy and the local-address
	// checks, at connect time. Nil means the host's resolver.
	// A *net.Resolver is one.
	Resolver Resolver

	// Build is build mode: the sandbox may run what it builds. The working
	// directory becomes executable as well as writable, and GOTMPDIR
	// points at a private scratch directory that is executable too, so
	// go test, cargo test, make && ./app, a venv's scripts and
	// node_modules/.bin work. The home, the temporary directories and
	// writable grants stay never executable. False, the zero value, keeps
	// write-xor-execute everywhere: nothing the sandbox writes can be run.
	Build bool

	// Python runs Python with a venv built on the host (python.go): the
	// venv is readable and executable, writable only with
	// AllowPipInstall, and MPLBACKEND=Agg is set unless Env sets it. Nil
	// means nothing Python-specific; PythonCommand then runs python3.
	Python *PythonConfig

	// IPC holds the host commands the sandbox may call (package ipc):
	// each registered command becomes an executable first on the
	// sandbox's PATH whose runs reach its handler in this process, over a
	// Unix socket that MOAT_IPC_ENDPOINT names. Nil, the zero value, means
	// none: no shims, no socket, no MOAT_IPC_ENDPOINT.
	IPC *ipc.Router

	// Deny lists absolute, clean paths the sandbox may neither read,
	// write nor execute, even where the isolation level or a grant of a
	// parent would expose them: access fails with EACCES (Landlock), not
	// as an empty directory. A grant of a path inside a denied one, or of
	// the path itself, wins, so a read grant restores one file of a denied
	// directory. A denied path that does not exist when [New] runs cannot
	// be created by the sandbox, and is not readable if the host creates
	// it later. A path reached through a symbolic link is denied at its
	// target too. On Linux with a mount namespace a denied path in a
	// writable place (the working directory, a writable grant) is masked
	// (an empty, read-only file or directory without permissions, which
	// the sandbox cannot remove, rename or chmod), and the place stays
	// fully writable; a missing one is guarded by an empty placeholder
	// directory that moat creates on the host for the run (with the
	// missing directories on the way), marked with its owner, removed by
	// Close and, after a crash, by the next run. Elsewhere, and without a mount namespace, Landlock
	// alone holds it, and Landlock cannot take rights back below a
	// directory: each directory on the way from a writable place to a
	// denied path keeps only listing, so its existing entries stay as
	// they were but no entry can be created or removed directly in it
	// (the fail-closed price, which the report names). Nil denies nothing
	// beyond the protections.
	Deny []string

	// ReadOnly lists absolute, clean paths inside writable places (the
	// working directory, writable grants) that stay readable but not
	// writable, as the git control paths are. A path that does not exist
	// is not created on the host. With a mount namespace an existing one
	// is bound read-only; for a missing one, and without a mount
	// namespace, the directories on the way keep only listing, as for
	// Deny, so the sandbox cannot create it either. The exception is a
	// missing control name (.git, .agents, .pi, .moat-*, .heimdall-*)
	// directly in a supplied working directory or a writable grant, as
	// policy documents list them: the sandbox may create it, and Close
	// moves aside what the run created there and reports it, so that the
	// place's top stays writable. Nil adds nothing beyond the control
	// paths moat always protects.
	ReadOnly []string

	// Seal lists absolute, clean directories whose entries created after
	// [New] (by the host or by anyone else) are neither readable nor
	// writable by the sandbox; entries that exist at New keep the access
	// the rest of the configuration gives them. Policy documents seal the
	// directories where a deny pattern could match a new entry. A sealed
	// directory, and the directories on the way to it from a writable
	// place, keep only listing: nothing can be created or removed
	// directly in them. Nil seals nothing.
	Seal []string

	// VirtualFiles maps absolute paths to read-only contents that the
	// sandbox sees at those paths, over whatever the host has there.
	// They exist only inside the sandbox's mount namespace and are never
	// written to the host, so they need namespaces: without them New
	// fails. A path that does not exist in a host directory the sandbox
	// sees (the working directory, /etc) is shown through a read-only
	// overlay of that directory in the sandbox's mount namespace, whose
	// other entries are the host's, bound through with their rights:
	// nothing can be created, removed or renamed directly in that
	// directory then. New refuses one whose directory is missing there
	// too. Their contents total at most 64 KiB. Nil adds none.
	VirtualFiles map[string]string

	// HideProc leaves /proc out of the sandbox. False, the zero value,
	// mounts a /proc of the sandbox's own PID namespace.
	HideProc bool
}

// security returns the effective protections.
func (c *Config) security() SecurityConfig {
	if c.Security != nil {
		return *c.Security
	}
	return c.Isolation.Security()
}

// Readable grants READ on p and returns c, for chaining.
func (c *Config) Readable(p ResolvedPath) *Config { return c.Grant(p, READ) }

// Writable grants WRITE (read and write, never execute) on p.
func (c *Config) Writable(p ResolvedPath) *Config { return c.Grant(p, WRITE) }

// Executable grants EXEC (read and execute) on p.
func (c *Config) Executable(p ResolvedPath) *Config { return c.Grant(p, EXEC) }

// Grant gives access a on p; a path granted twice keeps the union. WRITE|EXEC
// is the only way to give up write-xor-execute for p.
func (c *Config) Grant(p ResolvedPath, a Access) *Config {
	c.Grants = append(c.Grants, Grant{Path: p.p, Access: a})
	return c
}

// Env describes how a command's environment is built. The host environment is
// never inherited wholesale: the environment is cleared and rebuilt, and LD_*
// and DYLD_* variables are always removed.
//
// The zero value passes through TERM, LANG, LANGUAGE, TZ, COLORTERM and the
// LC_* variables from the host, and sets PATH, HOME, TMPDIR, TMP, TEMP, USER,
// LOGNAME and SHELL to sandbox values.
type Env struct {
	// Passthrough names host variables to copy into the sandbox when they
	// are set on the host. Nil means only the defaults listed on [Env].
	Passthrough []string

	// Set holds explicit NAME=VALUE entries, applied after the passthrough
	// variables and the sandbox's own values, so they override both.
	Set []string
}

// Limits bounds the resources of a command's process tree. For each field,
// zero means the default given on it and a negative value means no limit.
//
// Where moat runs as root and the host has cgroups, memory and process limits
// hold for the whole process tree. Otherwise memory is bounded per process
// and processes per sandbox through its own user namespace; [Sandbox.Report]
// says which.
type Limits struct {
	// MemoryBytes bounds memory. The default is half of the host's physical
	// memory. Per process it is RLIMIT_DATA, which counts memory that is
	// actually writable, so large address-space reservations (Java, V8,
	// sanitizers) keep working.
	MemoryBytes int64

	// CPUSeconds bounds the CPU time of each process (RLIMIT_CPU). The
	// default is no limit.
	CPUSeconds int64

	// FileSizeBytes bounds the size of any file a process writes
	// (RLIMIT_FSIZE). The default is 4 GiB.
	FileSizeBytes int64

	// Processes bounds the number of processes and threads of the sandbox.
	// The default is 1024.
	Processes int64

	// OpenFiles bounds the open descriptors of each process (RLIMIT_NOFILE).
	// The default is 1024, or the host's hard limit if that is lower.
	OpenFiles int64

	// DiskBytes bounds how much the working directory's file system may
	// fill while a command runs; the command is killed past it. The default
	// is half of the space free when the sandbox is created.
	DiskBytes int64

	// DiskInodes bounds how many files, directories and other entries the
	// command may create on the file systems of the working directory and
	// the sandbox's private temp and home; the command is killed past it.
	// The default is one per DefaultBytesPerInode (4 KiB) of the disk
	// limit, at least 1024, and at most half the inodes free when the
	// sandbox is created.
	DiskInodes int64

	// Timeout is the wall-clock limit of each command, after which its
	// whole process tree is killed. Zero or negative means no limit.
	Timeout time.Duration
}

// IOPriority is a disk scheduling priority. The zero value leaves the
// priority unchanged.
type IOPriority int

const (
	// IOPriorityDefault leaves the I/O priority unchanged.
	IOPriorityDefault IOPriority = iota
	// IOPriorityUtility is the lowest best-effort level: the sandbox yields
	// disk bandwidth to normal work but still makes progress under load.
	IOPriorityUtility
	// IOPriorityBackground is the idle class: the sandbox gets disk time only
	// when nobody else wants it.
	IOPriorityBackground
)

// String returns "default", "utility" or "background".
func (p IOPriority) String() string {
	switch p {
	case IOPriorityDefault:
		return "default"
	case IOPriorityUtility:
		return "utility"
	case IOPriorityBackground:
		return "background"
	}
	return "IOPriority(" + itoa(int64(p)) + ")"
}

// UnmarshalText parses "utility", "background" or "default" (or empty,
// the default) into p. On an error p is left as it was.
func (p *IOPriority) UnmarshalText(text []byte) error {
	switch s := string(text); s {
	case "default", "":
		*p = IOPriorityDefault
	case "utility":
		*p = IOPriorityUtility
	case "background":
		*p = IOPriorityBackground
	default:
		return errorf("io priority %q: want utility or background", s)
	}
	return nil
}

// Enforcement says what happens when the host cannot enforce part of a
// policy. The zero value is [Strict].
type Enforcement int

const (
	// Strict makes any restriction the host cannot enforce an error.
	Strict Enforcement = iota
	// BestEffort runs with whatever the host can enforce and lists the gaps
	// in [Sandbox.Report].
	BestEffort
)

// String returns "strict" or "best-effort".
func (e Enforcement) String() string {
	if e == BestEffort {
		return "best-effort"
	}
	return "strict"
}

// Resolver looks up a host's addresses for the proxy. network is always
// "ip". *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}
