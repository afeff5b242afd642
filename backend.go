package moat

import (
	"errors"
	"os"
	"slices"

	"github.com/moat-sandbox/moat/internal/fileid"
	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/spec"
)

// hostFacts is everything New read of the host, or prepared on it, that
// the policy depends on. openBackend fills it with readHost, the only I/O on
// the way from Config to the policy; planPolicy turns it, with the checked
// Config, into the policy, purely. The zero value is a host where nothing
// was read: no working directory, no identities, no shared temp.
type hostFacts struct {
	// ID names the sandbox; WorkDir is its working directory, which moat
	// created when AutoWorkDir.
	ID, WorkDir string
	AutoWorkDir bool
	// View is what the sandbox sees of the homes (homeView).
	View spec.View
	// Private are the sandbox's own temp and home (workdir.go).
	Private spec.Private
	// FileSizeBytes is the RLIMIT_FSIZE to start with (disk.go).
	FileSizeBytes int64
	// Identity is the device and inode of each grant and cache store, as
	// checked now; the sandbox must find the same objects at start.
	Identity map[string]fileKey
	// CacheStores are the kept cache stores (workdir.go); nil for none.
	CacheStores []string
	// SharedTemp are the shared-temp entries the sandbox is shown; nil
	// at the strict level.
	SharedTemp []string
	// Sockets are Config.Sockets, checked and identified.
	Sockets []spec.Socket
	// Canonical maps each Deny, ReadOnly and Seal path whose links lead
	// elsewhere to its canonical path; paths absent have none.
	Canonical map[string]string
	// Scratch is build mode's scratch directory; "" without build mode.
	Scratch string
	// ProxyPort is the policy proxy's port; 0 when no proxy runs.
	ProxyPort int
}

// fileKey identifies a file: its device and inode. The zero value is
// unchecked.
type fileKey struct{ Dev, Ino uint64 }

// readHost reads of the host what the policy needs besides the
// sandbox's own state, which h holds already: the identities of the
// grants, cache stores and sockets, the shared-temp entries shown (with
// sharedTempDirs, internal/prestart, for the directories variables name),
// and the canonical paths of the filesystem policy.
func readHost(cfg *Config, h *hostFacts, sharedTempDirs func(skip []string) []string) error {
	h.Identity = map[string]fileKey{}
	for _, g := range cfg.Grants {
		// The object checked now is the one the sandbox must find at start.
		dev, ino, err := fileid.Identity(g.Path)
		if err != nil {
			return errorf("grant %q: %w", g.Path, err)
		}
		h.Identity[g.Path] = fileKey{dev, ino}
	}
	for _, store := range h.CacheStores {
		dev, ino, err := fileid.Identity(store)
		if err != nil {
			return errorf("cache store %q: %w", store, err)
		}
		h.Identity[store] = fileKey{dev, ino}
	}
	if specLevel(cfg.Isolation) != spec.LevelStrict {
		skip := []string{h.WorkDir}
		for _, g := range cfg.Grants {
			skip = append(skip, g.Path)
		}
		skip = append(skip, h.CacheStores...)
		h.SharedTemp = hostview.SharedTempFiles(hostview.SharedTempDirs, skip)
		h.SharedTemp = append(h.SharedTemp, sharedTempDirs(skip)...)
	}
	sockets, err := socketGrants(cfg.Sockets)
	if err != nil {
		return err
	}
	h.Sockets = sockets
	h.Canonical = canonicalPaths(cfg.Deny, cfg.ReadOnly, cfg.Seal) // filesystem_spec.go
	return nil
}

// planPolicy translates the checked Config, and what New read and
// prepared on the host for it (h), into the policy the backend enforces.
// It is the only place where moat's public types become internal/spec's:
// a backend sees nothing of Config. It does no I/O, and its callbacks are
// added apart (openBackend), so that a synthetic host gives the same
// policy on any machine (backend_test.go's golden files).
func planPolicy(cfg *Config, h *hostFacts) spec.Policy {
	sec := cfg.security()
	p := spec.Policy{
		ID:          h.ID,
		WorkDir:     h.WorkDir,
		AutoWorkDir: h.AutoWorkDir,
		ExecWorkDir: cfg.Build,
		Level:       specLevel(cfg.Isolation),
		View:        h.View,
		Private:     h.Private,
		AllowGPU:    sec.AllowGPU,
		// security.go: the device classes besides the GPU.
		AllowNPU:      sec.AllowNPU,
		AllowHardware: sec.AllowHardware,
		// macOS: the consent-guarded folders (internal/sbpl).
		AllowTCCPrompts: sec.AllowTCCPrompts,
		Limits: spec.Limits{
			MemoryBytes:   cfg.Limits.MemoryBytes,
			CPUSeconds:    cfg.Limits.CPUSeconds,
			FileSizeBytes: h.FileSizeBytes,
			Processes:     cfg.Limits.Processes,
			OpenFiles:     cfg.Limits.OpenFiles,
		},
		Nice:       cfg.Nice,
		IOPriority: int(cfg.IOPriority),
		BestEffort: cfg.Enforcement == BestEffort,
	}
	for _, g := range cfg.Grants {
		id := h.Identity[g.Path]
		p.Grants = append(p.Grants, spec.Grant{Path: g.Path, Write: g.Access.CanWrite(), Exec: g.Access.CanExec(), Dev: id.Dev, Ino: id.Ino})
	}
	for _, store := range h.CacheStores { // workdir.go: writable, never executable
		id := h.Identity[store]
		p.Grants = append(p.Grants, spec.Grant{Path: store, Write: true, Dev: id.Dev, Ino: id.Ino})
	}
	if p.Level != spec.LevelStrict {
		p.View.SharedTemp = h.SharedTemp
	}
	p.Sockets = h.Sockets
	p.Network.ProxyPort = h.ProxyPort
	p.Network.DenyTCPPorts = slices.Clone(cfg.DenyTCPConnect)
	p.HostNetwork = isHostNetwork(cfg.Network)
	p.FS = fsPolicy(cfg, h.Canonical) // filesystem_spec.go
	if h.Scratch != "" {
		p.Scratch = []string{h.Scratch}
	}
	return p
}

// homeView reads what a sandbox with cfg sees of the home directories:
// the level's meaning for the homes, with the protections (hostview).
// New adds the state directory's protection (workdir.go).
func homeView(cfg *Config) spec.View {
	sec := cfg.security()
	in := hostview.Input{
		Level:       specLevel(cfg.Isolation),
		ProtectHome: sec.ProtectUserHome,
		Protected:   sec.ProtectedPaths,
		Toolchains:  ToolchainPaths,
	}
	for _, g := range cfg.Grants {
		in.Granted = append(in.Granted, g.Path)
	}
	return hostview.View(in)
}

// openBackend gathers the sandbox's state and reads the host for the
// policy (hostFacts, readHost), plans it (planPolicy), adds the callbacks,
// and hands it to this platform's backend (backend_linux.go,
// backend_other.go).
func (s *Sandbox) openBackend(pre prestarted) (spec.Backend, error) {
	h := hostFacts{
		ID:            s.id,
		WorkDir:       s.dirs.Work,
		AutoWorkDir:   s.dirs.Auto,
		View:          s.view,
		Private:       spec.Private{Tmp: s.dirs.Tmp(), VarTmp: s.dirs.VarTmp(), Home: s.dirs.PrivateHome()}, // internal/statedir
		FileSizeBytes: s.disk.StartFileSize(),                                                               // internal/disklimit
		CacheStores:   s.caches.Stores(),                                                                    // internal/cachehome
	}
	if s.proxy != nil {
		h.ProxyPort = s.proxy.port
		if slices.Contains(s.cfg.DenyTCPConnect, uint16(h.ProxyPort)) {
			closePrestarted(pre)
			return nil, errorf("deny tcp connect: port %d is the policy proxy's, which the sandbox must reach", h.ProxyPort)
		}
	}
	err := readHost(&s.cfg, &h, s.pre.SharedTempDirs) // internal/prestart
	s.sharedTemp = h.SharedTemp
	if err == nil {
		if h.Scratch, err = s.build.Prepare(); err != nil { // internal/buildmode
			err = errorf("%w", err)
		}
	}
	if err != nil {
		closePrestarted(pre)
		return nil, err
	}
	p := planPolicy(&s.cfg, &h)
	p.Hooks.DNSQuery = s.refused.DNSRefuser(NetworkDeniesAll(s.cfg.Network)) // internal/refusal
	if s.proxy != nil {
		p.Hooks.ServeProxy = s.proxy.serve
	}
	b, err := newBackend(p, pre)
	var use *UnsupportedSettingError // errors.go: already moat's
	if errors.As(err, &use) {
		return nil, err
	}
	if err != nil {
		return nil, errorf("%w", err)
	}
	return b, nil
}

// report is backend b's report, with wx, the layer that build mode
// decides, disk, the disk limit's layer, and the enforcement mode.
func report(b spec.Backend, enf Enforcement, wx, disk Layer) Report {
	sr := b.Report()
	r := Report{Platform: sr.Platform, Enforcement: enf, Gaps: sr.Gaps}
	own := false // a backend that cannot hold write-xor-execute says so itself
	for _, l := range sr.Layers {
		r.Layers = append(r.Layers, Layer(l))
		own = own || l.Name == wx.Name
	}
	if !own {
		r.Layers = append(r.Layers, wx)
	}
	r.Layers = append(r.Layers, disk)
	return r
}

// socketGrants checks Config.Sockets on the host (validate.go checked
// each path absolute and clean): no link on the way (judged like a
// grant), naming an existing socket file, whose identity the sandbox must
// then find.
func socketGrants(paths []string) ([]spec.Socket, error) {
	var out []spec.Socket
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		if err := checkNoLinks(p); err != nil {
			return nil, err
		}
		// One lstat: the type checked is that of the object identified.
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, errorf("socket %q: %w", p, err)
		}
		if fi.Mode().Type() != os.ModeSocket {
			return nil, errorf("socket %q: not a Unix socket", p)
		}
		dev, ino := fileid.IdentityOf(fi)
		out = append(out, spec.Socket{Path: p, Dev: dev, Ino: ino})
	}
	return out, nil
}
