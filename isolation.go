package moat

// Isolation is how much of the host a sandbox may see besides its working
// directory and its grants. The zero value, [IsolationStrict], is the
// library's default; the CLI defaults to [IsolationDefault].
type Isolation int

const (
	// IsolationStrict allows system files only: programs, libraries and
	// /etc. Nothing in the user's home and nothing in shared temporary
	// directories is readable unless granted.
	IsolationStrict Isolation = iota
	// IsolationDefault adds, read-only, the shared temporary directory and
	// a curated list of what toolchains need from the user's home (git
	// configuration, shell rc files, ~/.local/bin and ~/.local/lib,
	// package and build caches, language toolchains under the home). Other projects and documents in the home
	// stay unreadable, and every protection still applies inside it.
	IsolationDefault
	// IsolationPermissive reads and writes everything except protected
	// paths, and executes everything except from shared temporary
	// directories. It gives up write-xor-execute. It is meant for trusted
	// build tools, never as a default.
	IsolationPermissive
)

// String returns "strict", "default" or "permissive".
func (i Isolation) String() string {
	switch i {
	case IsolationStrict:
		return "strict"
	case IsolationDefault:
		return "default"
	case IsolationPermissive:
		return "permissive"
	}
	return "Isolation(" + itoa(int64(i)) + ")"
}

// UnmarshalText parses "strict", "default" or "permissive" into i. On an
// error i is left as it was.
func (i *Isolation) UnmarshalText(text []byte) error {
	switch s := string(text); s {
	case "strict":
		*i = IsolationStrict
	case "default":
		*i = IsolationDefault
	case "permissive":
		*i = IsolationPermissive
	default:
		return errorf("isolation %q: want strict, default or permissive", s)
	}
	return nil
}

// Security returns the level's preset protections: every protection on,
// every device class (GPU, NPU, hardware) denied and no macOS privacy
// prompts, except that [IsolationPermissive] lets the rest of the home be
// read (ProtectUserHome off) while credentials, shell histories, package
// credentials, cloud configuration, browser data and keychains stay
// protected.
func (i Isolation) Security() SecurityConfig {
	s := SecurityConfig{
		ProtectUserHome:           true,
		ProtectCredentials:        true,
		ProtectShellHistory:       true,
		ProtectPackageCredentials: true,
		ProtectCloudConfig:        true,
		ProtectBrowserData:        true,
		ProtectKeychains:          true,
	}
	if i == IsolationPermissive {
		s.ProtectUserHome = false
	}
	return s
}
