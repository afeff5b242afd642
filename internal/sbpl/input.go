package sbpl

// Level is how much of the host the profile shows besides the working
// directory and the grants. The zero value is LevelStrict.
type Level int

// The levels, as spec.Level orders them.
const (
	// LevelStrict reads system files only.
	LevelStrict Level = iota
	// LevelDefault adds shared temp's listed files and the home's
	// toolchain entries, read-only.
	LevelDefault
	// LevelPermissive reads, writes and executes everything except the
	// protected and denied paths; nothing runs from shared temp.
	LevelPermissive
)

// Input is everything a profile is built from, already resolved: every
// path absolute and clean. The zero value is a strict profile with nothing
// writable, which [Build] refuses for want of a working directory.
type Input struct {
	// Level is the isolation level.
	Level Level
	// WorkDir is the working directory, readable and writable, never
	// executable unless ExecWorkDir.
	WorkDir string
	// ExecWorkDir makes the working directory executable (build mode).
	ExecWorkDir bool
	// Private are the sandbox's own directories (temp, home): readable
	// and writable, never executable. Nil means none.
	Private []string
	// Scratch are directories of the sandbox alone that it may write and
	// execute (build mode's GOTMPDIR). Nil means none.
	Scratch []string
	// Grants are the explicit grants, in the order given. Nil means none.
	Grants []Grant

	// Home is the user's home, for the folders macOS guards with consent
	// prompts; empty when unknown.
	Home string
	// HomeRead are the home's entries the level shows, readable and
	// executable, never writable. Nil means none.
	HomeRead []string
	// HideHome is a home hidden as a whole at LevelPermissive, with
	// HomeRead carved back out; empty hides none.
	HideHome string
	// SharedTemp are the shared-temp files the sandbox may read
	// (LevelDefault). Nil means none.
	SharedTemp []string
	// Protected are the protections' paths: neither readable, writable
	// nor executable. Nil means none.
	Protected []string
	// Deny are further paths denied like the protected ones. Nil means
	// none.
	Deny []string
	// ReadOnly are paths inside writable places that must stay unwritable
	// (the git control paths, Config.ReadOnly). Nil means none.
	ReadOnly []string
	// Seal are directories whose entries created after start are neither
	// readable nor writable. Nil means none.
	Seal []Seal

	// Helper is moat's own binary, which sandbox-exec runs inside the
	// sandbox to apply the limits and start the command: readable and
	// executable, never writable. Empty means none.
	Helper string
	// Sockets are host Unix sockets the sandbox may connect to. Nil means
	// none.
	Sockets []string
	// Terminals are the terminal devices the command inherits as its
	// standard descriptors, readable and writable. No other terminal of
	// the user (whose keystrokes another could read) is. Nil means none.
	Terminals []string

	// ProxyPort is the policy proxy's port on the loopback; zero, with
	// HostNetwork false, means no network at all.
	ProxyPort int
	// HostNetwork leaves the sandbox on the host's network.
	HostNetwork bool

	// AllowGPU opens the GPU's IOKit user clients and Metal's compiler
	// service.
	AllowGPU bool
	// AllowNPU opens the Neural Engine's IOKit user clients.
	AllowNPU bool
	// AllowHardware opens every IOKit user client and the serial devices.
	AllowHardware bool
	// AllowTCCPrompts leaves the folders that macOS guards with consent
	// prompts (Desktop, Documents, Downloads, the media folders, Library)
	// to the level and the protections; false denies them in the home
	// outright, so no prompt can appear on the user's screen.
	AllowTCCPrompts bool
	// TTYIoctl allows ioctls on terminal devices (isatty, window size,
	// line discipline). moat leaves it false for root, for whom the kernel
	// would accept TIOCSTI on an inherited terminal.
	TTYIoctl bool
}

// Grant is one explicit grant. Reading is implied. The zero value grants
// nothing (an empty path, which Build refuses).
type Grant struct {
	Path        string
	Write, Exec bool
	// Dir says the path is a directory, matched with everything below
	// it; false matches the one file.
	Dir bool
}

// Seal is one sealed directory and the entries it held at start, which
// keep the access the rest of the profile gives them. The zero value
// seals nothing (an empty path, which Build refuses).
type Seal struct {
	Dir  string
	Keep []string
}
