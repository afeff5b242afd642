package spec

import "net"

// Policy is everything a backend needs to enforce one sandbox, already
// checked and resolved: every path absolute, clean and free of links,
// every default applied. The zero value is a strict sandbox with no
// working directory, which no backend accepts.
type Policy struct {
	// ID names the sandbox in host objects (cgroups, state directories).
	ID string
	// WorkDir is the working directory: always writable, executable only
	// with ExecWorkDir.
	WorkDir string
	// AutoWorkDir marks a working directory moat created and removes, in
	// which nothing persists after the sandbox.
	AutoWorkDir bool
	// ExecWorkDir makes the working directory executable as well as
	// writable (build mode); false keeps it never executable.
	ExecWorkDir bool
	// Scratch are directories moat created for this sandbox alone and
	// removes with it, which the sandbox may write and execute (build
	// mode's GOTMPDIR). Nil means none.
	Scratch []string

	// Grants are the paths granted besides the working directory.
	Grants []Grant
	// Sockets are host Unix socket files the sandbox may connect to. Nil
	// means none: with a socket guard, only sockets the sandbox bound
	// itself are reachable.
	Sockets []Socket

	// Level is how much of the host the sandbox sees besides its working
	// directory and grants.
	Level Level
	// View is what the sandbox sees of the users' homes, decided by
	// package hostview from the level and the protections.
	View View
	// Private are the sandbox's own temporary directories and home.
	Private Private
	// AllowGPU exposes the GPU device nodes and driver files.
	AllowGPU bool
	// AllowNPU exposes the device nodes and driver files of neural and
	// tensor accelerators (accel, vendor nodes, VFIO).
	AllowNPU bool
	// AllowHardware exposes peripheral devices: USB, serial ports,
	// cameras and audio.
	AllowHardware bool
	// AllowTCCPrompts leaves the folders macOS guards with consent
	// prompts to the level and the protections (the macOS backend);
	// false denies them outright. Other backends ignore it.
	AllowTCCPrompts bool

	// Limits are the final resource limits.
	Limits Limits
	// Nice lowers CPU priority by 0 (unchanged) through 19 steps.
	Nice int
	// IOPriority is 0 (unchanged), 1 (best-effort, lowest) or 2 (idle).
	IOPriority int
	// BestEffort accepts a host that cannot enforce every layer: what it
	// cannot becomes a Report gap instead of an error.
	BestEffort bool

	// Network is how the sandbox reaches the network.
	Network Network
	// HostNetwork leaves the sandbox on the host's network: no network
	// namespace and no proxy (Network is then zero). False keeps it off
	// the network except through the proxy.
	HostNetwork bool

	// FS is the filesystem policy beyond the working directory and the
	// grants (fspolicy.go).
	FS FS

	// Hooks are the callbacks the backend calls; they are not part of the
	// policy's data, and a plan written out leaves them out.
	Hooks Hooks `json:"-"`
}

// Level is an isolation level. The zero value is LevelStrict.
type Level int

// The isolation levels, from least to most of the host visible.
const (
	// LevelStrict shows system files only, besides the working
	// directory and grants.
	LevelStrict Level = iota
	// LevelDefault adds shared temp's world-readable regular files, read
	// only, and the home's toolchain entries (View.HomeRead).
	LevelDefault
	// LevelPermissive shows the whole host, readable and writable, except
	// the protected paths; nothing runs from shared temp.
	LevelPermissive
)

// String names the level as the CLI and TOML do.
func (l Level) String() string {
	switch l {
	case LevelStrict:
		return "strict"
	case LevelDefault:
		return "default"
	case LevelPermissive:
		return "permissive"
	}
	return "unknown"
}

// Grant is one granted path. Reading is implied. The zero value grants
// nothing usable (an empty path).
type Grant struct {
	Path        string
	Write, Exec bool
	// Dev and Ino identify the object checked at configuration, which the
	// sandbox must find at start; zero means unchecked.
	Dev, Ino uint64
}

// Socket is one host Unix socket file the sandbox may connect to,
// identified by the Dev and Ino it had when checked. The zero value
// names none.
type Socket struct {
	Path     string
	Dev, Ino uint64
}

// View is what the sandbox sees of the users' homes. The zero value
// hides nothing and shows nothing extra.
type View struct {
	// Home is the user's home directory, resolved; empty when unknown.
	Home string
	// HomeRead are paths in the home the level shows, readable and
	// executable, never writable.
	HomeRead []string
	// Protected are paths that stay unreadable wherever the level or a
	// grant of a parent would expose them (a protected link and its
	// target both appear).
	Protected []string
	// HideHome is a home hidden as a whole, with HomeRead carved back out
	// of it; empty hides none.
	HideHome string
	// SharedTemp are the host's shared-temp files the sandbox may read
	// (LevelDefault and LevelPermissive). Nil means none.
	SharedTemp []string
}

// Private are host directories of this sandbox alone. Each is writable
// and never executable; empty means none.
type Private struct {
	// Tmp and VarTmp become the sandbox's /tmp and /var/tmp where the
	// backend can mount them there; otherwise Tmp is writable at its own
	// path, which TMPDIR names.
	Tmp, VarTmp string
	// Home is the sandbox's HOME, writable at its own path.
	Home string
}

// Limits are final resource limits; zero means none.
type Limits struct {
	MemoryBytes, CPUSeconds, FileSizeBytes, Processes, OpenFiles int64
}

// Network is how the sandbox reaches the network: only through the
// policy proxy, when there is one. The zero value is no network at all.
type Network struct {
	// ProxyPort is the policy proxy's port; zero means no network. With a
	// network namespace the proxy listens on 127.0.0.1:ProxyPort inside
	// it; without one, on the host's loopback.
	ProxyPort int
	// DenyTCPPorts are TCP ports no command may connect to or bind, on
	// any address, even on the host's network (HostNetwork); never the
	// proxy's port. Nil (the zero value) denies none beyond the rest of
	// the policy.
	DenyTCPPorts []uint16
}

// Hooks are the callbacks a backend calls into moat with, kept apart from
// the policy's data so that the policy is a plain value (and its plan can
// be compared with a golden file). The zero value calls nothing.
type Hooks struct {
	// ServeProxy is given each listener the proxy must serve; it must not
	// block. The backend closes the listeners. Nil serves none.
	ServeProxy func(net.Listener)
	// DNSQuery, when set, is told each name the sandbox looks up through
	// its resolver configuration, which the backend answers "no such
	// name". It must not block. Nil tells no one.
	DNSQuery func(name string)
}

// WritablePlaces are where the sandbox writes and what it writes
// persists, whose git control paths stay read-only: the working directory
// unless moat created it, and the writable grants. Nil means none.
func (p *Policy) WritablePlaces() []string {
	var out []string
	if !p.AutoWorkDir {
		out = append(out, p.WorkDir)
	}
	for _, g := range p.Grants {
		if g.Write {
			out = append(out, g.Path)
		}
	}
	return out
}
