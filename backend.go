package moat

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/spec"
)

// policy translates the sandbox's checked Config, and what New prepared on
// the host for it, into the policy its backend enforces. It is the only
// place where moat's public types become internal/spec's: a backend sees
// nothing of Config.
func (s *Sandbox) policy() (spec.Policy, error) {
	cfg := &s.cfg
	p := spec.Policy{
		ID:          s.id,
		WorkDir:     s.workDir,
		AutoWorkDir: s.autoDir,
		ExecWorkDir: cfg.Build,
		Level:       specLevel(cfg.Isolation),
		View:        s.view,
		// workdir.go
		Private:  spec.Private{Tmp: s.privateTmp(), VarTmp: s.privateVarTmp(), Home: s.privateHome()},
		AllowGPU: cfg.security().AllowGPU,
		// security.go: the device classes besides the GPU.
		AllowNPU:      cfg.security().AllowNPU,
		AllowHardware: cfg.security().AllowHardware,
		// macOS: the consent-guarded folders (internal/sbpl).
		AllowTCCPrompts: cfg.security().AllowTCCPrompts,
		Limits: spec.Limits{
			MemoryBytes:   cfg.Limits.MemoryBytes,
			CPUSeconds:    cfg.Limits.CPUSeconds,
			FileSizeBytes: s.startFileSize(),
			Processes:     cfg.Limits.Processes,
			OpenFiles:     cfg.Limits.OpenFiles,
		},
		Nice:       cfg.Nice,
		IOPriority: int(cfg.IOPriority),
		BestEffort: cfg.Enforcement == BestEffort,
	}
	for _, g := range cfg.Grants {
		// The object checked now is the one the sandbox must find at start.
		dev, ino, err := fileIdentity(g.Path)
		if err != nil {
			return p, errorf("grant %q: %w", g.Path, err)
		}
		p.Grants = append(p.Grants, spec.Grant{Path: g.Path, Write: g.Access.CanWrite(), Exec: g.Access.CanExec(), Dev: dev, Ino: ino})
	}
	for _, store := range s.cacheStores() { // caches.go: writable, never executable
		dev, ino, err := fileIdentity(store)
		if err != nil {
			return p, errorf("cache store %q: %w", store, err)
		}
		p.Grants = append(p.Grants, spec.Grant{Path: store, Write: true, Dev: dev, Ino: ino})
	}
	if p.Level != spec.LevelStrict {
		skip := []string{p.WorkDir}
		for _, g := range p.Grants {
			skip = append(skip, g.Path)
		}
		p.View.SharedTemp = hostview.SharedTempFiles(hostview.SharedTempDirs, skip)
		p.View.SharedTemp = append(p.View.SharedTemp, s.sharedTempDirs(skip)...) // prestart_temp.go
		s.sharedTemp = p.View.SharedTemp
	}
	sockets, err := socketGrants(cfg.Sockets)
	if err != nil {
		return p, err
	}
	p.Sockets = sockets
	if s.proxy != nil {
		p.Network.ProxyPort, p.Network.ServeProxy = s.proxy.port, s.proxy.serve
	}
	p.Network.DNSQuery = s.dnsRefuser() // dnsrefusal.go
	p.HostNetwork = IsHostNetwork(cfg.Network)
	if p.FS, err = s.fsPolicy(); err != nil { // filesystem_spec.go
		return p, err
	}
	scratch, err := s.prepareBuild()
	if err != nil {
		return p, err
	}
	if scratch != "" {
		p.Scratch = []string{scratch}
	}
	return p, nil
}

// homeView decides what the sandbox sees of the home directories: the
// level's meaning for the homes, with the protections (hostview).
func (s *Sandbox) homeView() spec.View {
	sec := s.cfg.security()
	in := hostview.Input{
		Level:       specLevel(s.cfg.Isolation),
		ProtectHome: sec.ProtectUserHome,
		Protected:   sec.ProtectedPaths,
		Toolchains:  ToolchainPaths,
	}
	for _, g := range s.cfg.Grants {
		in.Granted = append(in.Granted, g.Path)
	}
	return s.protectStateRoot(hostview.View(in)) // controljournal.go
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

// openBackend translates the policy and hands it to this platform's
// backend (backend_linux.go, backend_other.go).
func (s *Sandbox) openBackend(pre prestarted) (spec.Backend, error) {
	p, err := s.policy()
	if err != nil {
		closePrestarted(pre)
		return nil, err
	}
	b, err := newBackend(p, pre)
	var use *UnsupportedSettingError // unsupported_setting.go: already moat's
	if errors.As(err, &use) {
		return nil, err
	}
	if err != nil {
		return nil, errorf("%w", err)
	}
	return b, nil
}

// report is the backend's report, with the layer that build mode decides
// and the enforcement mode.
func (s *Sandbox) report() Report {
	sr := s.backend.Report()
	r := Report{Platform: sr.Platform, Enforcement: s.cfg.Enforcement, Gaps: sr.Gaps}
	own := false // a backend that cannot hold write-xor-execute says so itself
	for _, l := range sr.Layers {
		r.Layers = append(r.Layers, Layer(l))
		own = own || l.Name == s.wx.Name
	}
	if !own {
		r.Layers = append(r.Layers, s.wx)
	}
	r.Layers = append(r.Layers, s.diskLayer()) // disk.go
	return r
}

// strictMissing is the *UnsupportedError that Strict enforcement makes of
// what the backend cannot enforce now, or nil.
func (s *Sandbox) strictMissing() error {
	if s.cfg.Enforcement != Strict {
		return nil
	}
	if missing := s.backend.Missing(); len(missing) > 0 {
		return &UnsupportedError{Missing: missing}
	}
	return nil
}

// errNamespaces asks Cmd.start to retry without namespaces.
var errNamespaces = errors.New("namespaces refused by the host")

// startError converts a backend's failure to start a command.
func startError(err error) error {
	var se *spec.StartError
	if !errors.As(err, &se) {
		return errorf("%w", err)
	}
	if se.Redirected {
		return &commandError{msg: se.Msg, kind: ErrGrantRedirected, cause: se}
	}
	switch se.Code {
	case 127:
		return &commandError{msg: se.Msg, kind: exec.ErrNotFound, cause: se}
	case 126:
		return &commandError{msg: se.Msg, kind: errPermission, cause: se}
	}
	return &commandError{msg: se.Msg, cause: se}
}

// socketGrants checks Config.Sockets: each path absolute and clean, with
// no link on the way (judged like a grant), naming an existing socket
// file, whose identity the sandbox must then find.
func socketGrants(paths []string) ([]spec.Socket, error) {
	var out []spec.Socket
	seen := map[string]bool{}
	for _, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return nil, errorf("socket %q: path must be absolute and clean", p)
		}
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
		dev, ino := identityOf(fi)
		out = append(out, spec.Socket{Path: p, Dev: dev, Ino: ino})
	}
	return out, nil
}

// noteSocketRefusals records what the backend's supervisor saw the sandbox
// refused since the last call: host sockets, execs of written files
// (build.go), socket families.
func (s *Sandbox) noteSocketRefusals() {
	for _, r := range s.backend.Refusals() {
		if r.Dropped > 0 {
			s.noteDroppedRefusals(r.Kind, r.Dropped) // supervisorrefusal.go
			continue
		}
		switch r.Kind {
		case spec.RefusedUnixSocket:
			s.addRefusal(Refusal{
				Kind:    "socket",
				Subject: r.Subject,
				Detail:  "a host Unix socket; connecting to it is refused",
				Setting: "sockets",
			})
		case spec.RefusedExec:
			s.noteWrittenExec(r.Subject)
		case spec.RefusedSocket:
			// No flag opens other families: the detail says what the
			// sandbox may use instead.
			s.addRefusal(Refusal{Kind: "socket", Subject: r.Subject, Detail: r.Detail})
		}
	}
}
