package moat

import "github.com/moat-sandbox/moat/internal/spec"

// SecurityConfig switches the protections that keep the user's secrets out
// of a sandbox, and hardware access into it. Protections deny paths that the
// isolation level or a grant of a parent directory would otherwise expose;
// an explicit grant of a protected path itself, or of a path inside it,
// always wins. The zero value protects nothing and opens no device class
// (GPU, NPU, hardware); use [Isolation.Security] for a preset.
type SecurityConfig struct {
	// ProtectUserHome keeps the user's home unreadable except for the
	// curated toolchain list of [IsolationDefault]. It has no effect at
	// [IsolationStrict], where the home is never readable unless granted.
	ProtectUserHome bool
	// ProtectCredentials denies SSH and GnuPG keys, .netrc, git, GitHub,
	// GitLab, Docker and container-registry logins, database, cloud-storage
	// and service tokens, and entries of the curated toolchain directories
	// named like a secret (found by a bounded scan, which also runs under
	// ProtectPackageCredentials). Package-registry credentials and shell
	// histories have switches of their own.
	ProtectCredentials bool
	// ProtectShellHistory denies shell and REPL histories (bash, zsh, fish,
	// Python, Node, psql, MySQL, IPython, less and others), where typed
	// secrets end up.
	ProtectShellHistory bool
	// ProtectPackageCredentials denies package-registry credentials and
	// the configuration files whose index or registry URLs carry
	// passwords: npm, Yarn, pnpm, Bun, PyPI, pip, uv, Poetry, conda,
	// Cargo, RubyGems, Composer, Maven, Gradle, Ivy, sbt, NuGet, Hugging
	// Face, Helm.
	ProtectPackageCredentials bool
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
	// AllowNPU opens the device nodes of neural and tensor accelerators
	// and the /sys paths their drivers read: on Linux the kernel's accel
	// nodes (/dev/accel, /dev/accel*: Intel NPU, AMD XDNA, Habana Gaudi,
	// Qualcomm AI 100, Google TPU) and the vendors' own (Huawei Ascend
	// /dev/davinci*, /dev/hisi_hdc, /dev/devmm_svm; AWS Neuron
	// /dev/neuron*; Habana /dev/hl*; Tenstorrent; Cambricon; Coral
	// /dev/apex_*), and VFIO (/dev/vfio), through which TPUs and other
	// passed-through devices are driven. When false they are denied.
	AllowNPU bool
	// AllowHardware opens peripheral devices: USB (/dev/bus/usb,
	// /dev/usb), serial ports (/dev/ttyUSB*, /dev/ttyACM*, /dev/ttyS*,
	// /dev/ttyAMA* and the like), cameras (/dev/video*, /dev/media*,
	// /dev/v4l*) and audio (/dev/snd), with the /sys paths and udev data
	// that libraries enumerate them by. Input devices, raw HID, uinput,
	// I2C, SPI and GPIO are never opened. When false they are denied.
	AllowHardware bool
	// AllowTCCPrompts lets a macOS sandbox ask for the privacy permissions
	// that macOS prompts for (TCC: camera, microphone, contacts, screen
	// recording...); the macOS profile denies them when false. It is
	// recorded on every OS but has no resource elsewhere: on Linux and
	// Windows it changes nothing.
	AllowTCCPrompts bool
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
	// ProtectShellHistory, when set, replaces [SecurityConfig.ProtectShellHistory].
	ProtectShellHistory *bool
	// ProtectPackageCredentials, when set, replaces [SecurityConfig.ProtectPackageCredentials].
	ProtectPackageCredentials *bool
	// AllowGPU, when set, replaces [SecurityConfig.AllowGPU].
	AllowGPU *bool
	// AllowNPU, when set, replaces [SecurityConfig.AllowNPU].
	AllowNPU *bool
	// AllowHardware, when set, replaces [SecurityConfig.AllowHardware].
	AllowHardware *bool
	// AllowTCCPrompts, when set, replaces [SecurityConfig.AllowTCCPrompts].
	AllowTCCPrompts *bool
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
	set(&s.ProtectShellHistory, o.ProtectShellHistory)
	set(&s.ProtectPackageCredentials, o.ProtectPackageCredentials)
	set(&s.AllowGPU, o.AllowGPU)
	set(&s.AllowNPU, o.AllowNPU)
	set(&s.AllowHardware, o.AllowHardware)
	set(&s.AllowTCCPrompts, o.AllowTCCPrompts)
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
		ProtectUserHome:           pick(o.ProtectUserHome, later.ProtectUserHome),
		ProtectCredentials:        pick(o.ProtectCredentials, later.ProtectCredentials),
		ProtectCloudConfig:        pick(o.ProtectCloudConfig, later.ProtectCloudConfig),
		ProtectBrowserData:        pick(o.ProtectBrowserData, later.ProtectBrowserData),
		ProtectKeychains:          pick(o.ProtectKeychains, later.ProtectKeychains),
		ProtectShellHistory:       pick(o.ProtectShellHistory, later.ProtectShellHistory),
		ProtectPackageCredentials: pick(o.ProtectPackageCredentials, later.ProtectPackageCredentials),
		AllowGPU:                  pick(o.AllowGPU, later.AllowGPU),
		AllowNPU:                  pick(o.AllowNPU, later.AllowNPU),
		AllowHardware:             pick(o.AllowHardware, later.AllowHardware),
		AllowTCCPrompts:           pick(o.AllowTCCPrompts, later.AllowTCCPrompts),
	}
}

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

// specLevel is an Isolation as the backends know it.
func specLevel(i Isolation) spec.Level {
	switch i {
	case IsolationDefault:
		return spec.LevelDefault
	case IsolationPermissive:
		return spec.LevelPermissive
	}
	return spec.LevelStrict
}
