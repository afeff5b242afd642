package moat

// SecurityConfig switches the protections that keep the user's secrets out
// of a sandbox, and hardware access into it. Protections deny paths that the
// isolation level or a grant of a parent directory would otherwise expose;
// an explicit grant of a protected path itself, or of a path inside it,
// always wins. The zero value protects nothing and allows no GPU; use
// [Isolation.Security] for a preset.
type SecurityConfig struct {
	// ProtectUserHome keeps the user's home unreadable except for the
	// curated toolchain list of [IsolationDefault]. It has no effect at
	// [IsolationStrict], where the home is never readable unless granted.
	ProtectUserHome bool
	// ProtectCredentials denies SSH and GnuPG keys, .netrc, git, GitHub,
	// Docker, npm, PyPI, Cargo and other package-registry credentials, the
	// tokens and password-bearing configuration kept in the curated
	// toolchain directories (and entries there named like a secret, found
	// by a bounded scan), and shell and REPL histories.
	ProtectCredentials bool
	// ProtectCloudConfig denies AWS, Azure, Google Cloud, Kubernetes, OCI,
	// DigitalOcean and similar cloud CLI configuration.
	ProtectCloudConfig bool
	// ProtectBrowserData denies the profiles of Firefox, Chrome, Chromium,
	// Brave, Edge, Vivaldi and Opera.
	ProtectBrowserData bool
	// ProtectKeychains denies GNOME keyrings, KWallet, pass and the macOS
	// keychains.
	ProtectKeychains bool
	// AllowGPU opens the GPU device nodes (/dev/nvidia*, /dev/dri,
	// /dev/kfd) and the /sys and /proc paths their drivers read. When
	// false they are denied.
	AllowGPU bool
}

// SecurityOverrides is a partial [SecurityConfig]: each non-nil field
// replaces the same switch of the configuration it is applied to, so a
// config file and command-line flags can be layered onto a preset. The zero
// value changes nothing.
type SecurityOverrides struct {
	// ProtectUserHome, when set, replaces [SecurityConfig.ProtectUserHome].
	ProtectUserHome *bool
	// ProtectCredentials, when set, replaces [SecurityConfig.ProtectCredentials].
	ProtectCredentials *bool
	// ProtectCloudConfig, when set, replaces [SecurityConfig.ProtectCloudConfig].
	ProtectCloudConfig *bool
	// ProtectBrowserData, when set, replaces [SecurityConfig.ProtectBrowserData].
	ProtectBrowserData *bool
	// ProtectKeychains, when set, replaces [SecurityConfig.ProtectKeychains].
	ProtectKeychains *bool
	// AllowGPU, when set, replaces [SecurityConfig.AllowGPU].
	AllowGPU *bool
}

// With returns s with every switch that o sets replaced.
func (s SecurityConfig) With(o SecurityOverrides) SecurityConfig {
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&s.ProtectUserHome, o.ProtectUserHome)
	set(&s.ProtectCredentials, o.ProtectCredentials)
	set(&s.ProtectCloudConfig, o.ProtectCloudConfig)
	set(&s.ProtectBrowserData, o.ProtectBrowserData)
	set(&s.ProtectKeychains, o.ProtectKeychains)
	set(&s.AllowGPU, o.AllowGPU)
	return s
}

// With returns o with every switch that later sets replaced, so later
// layers win.
func (o SecurityOverrides) With(later SecurityOverrides) SecurityOverrides {
	pick := func(a, b *bool) *bool {
		if b != nil {
			return b
		}
		return a
	}
	return SecurityOverrides{
		ProtectUserHome:    pick(o.ProtectUserHome, later.ProtectUserHome),
		ProtectCredentials: pick(o.ProtectCredentials, later.ProtectCredentials),
		ProtectCloudConfig: pick(o.ProtectCloudConfig, later.ProtectCloudConfig),
		ProtectBrowserData: pick(o.ProtectBrowserData, later.ProtectBrowserData),
		ProtectKeychains:   pick(o.ProtectKeychains, later.ProtectKeychains),
		AllowGPU:           pick(o.AllowGPU, later.AllowGPU),
	}
}
