package policy

import (
	"fmt"
	"path/filepath"

	"github.com/moat-sandbox/moat"
)

// Result is a merged and checked configuration, made by [Merge]. The zero
// value is the library's zero Config (strict isolation and its preset
// protections) with no network and no grants.
type Result struct {
	// Config is the sandbox policy. Isolation and Security are always set
	// (Security to the layered protections); WorkDir, Grants, Sockets,
	// Home and the network policy are left empty, since paths are
	// resolved, and the audit log opened, by [Result.Resolve]: see
	// WorkDir, Grants, Sockets, Home and Network.
	Config moat.Config
	// WorkDir is the working directory as written, for [moat.ResolvePaths];
	// empty means a fresh one.
	WorkDir string
	// KeepWorkDir makes [Result.Resolve] create the fresh working
	// directory itself, so that it is kept like a supplied one, and name
	// it in [Resolved.KeptWorkDir]; false leaves a fresh one to moat,
	// which removes it. It changes nothing when WorkDir is set: a
	// supplied working directory is always kept.
	KeepWorkDir bool
	// Home is the kept home as written, for [moat.CheckHome]; "" for a
	// fresh private one.
	Home string
	// Grants holds one request per path as written, its access the union
	// of every layer's grants of that path, in order of first appearance,
	// for [moat.ResolvePaths]. Two spellings of one path are unioned by
	// [moat.New] once resolved.
	Grants []moat.PathRequest
	// Network is the network settings, for a moat.NetworkPolicy.
	Network Network
	// Sockets holds the host Unix sockets of every layer, in order, as
	// written, for [Result.Resolve].
	Sockets []string
	// Python is the merged settings of moat python's venv (python.go).
	Python Python

	// setBy records which layer's source set each scalar key last.
	setBy map[string]Source
}

// layerOf returns a layer with the source that set key last, or with no
// source.
func (r *Result) layerOf(key string) *Layer {
	return &Layer{Source: r.setBy[key]}
}

// Describe names key as the layer that set it spells it, with its
// location: `config "moat.toml": line 9: workdir.path` or "--workdir". A
// key no layer set is named as the config file spells it.
func (r *Result) Describe(key string) string {
	l := r.layerOf(key)
	return l.at(key) + l.spell(key)
}

// Merge layers the settings of layers, earliest first, under heel's rules:
//
//   - a scalar of a later layer beats the same scalar of an earlier one;
//   - lists (allowed domains and local ranges, environment entries)
//     concatenate in layer order, and for a variable named twice the later
//     entry wins;
//   - grants of the same path are unioned: rw from one layer and rx from
//     another give rwx;
//   - protections are the final isolation level's preset
//     ([moat.Isolation.Security]), then each layer's overrides in turn.
//
// With no layer setting an isolation level it is [moat.IsolationStrict],
// the library's default; a caller with another default, like the CLI,
// passes it as a first layer. Merge also checks what no single layer can:
// an allow list needs at least one domain, an audit log or rotation needs a
// network that runs the proxy (allow-all or allow-list), and allowed
// domains (or local ranges) need a mode that uses them, unless a later
// layer chose that mode, which then drops them. Merge does no I/O.
func Merge(layers ...Layer) (Result, error) {
	r := Result{setBy: map[string]Source{}}
	iso := moat.IsolationStrict
	var sec moat.SecurityOverrides
	var env []EnvVar
	access := map[string]moat.Access{}
	var order []string
	modeAt := -1 // the layer that set the network mode
	for i := range layers {
		l := &layers[i]
		set := func(key string) { r.setBy[key] = l.Source }
		if l.Isolation != nil {
			iso = *l.Isolation
			set("isolation")
		}
		sec = sec.With(l.Security)
		if l.Network != "" {
			r.Network.Mode, modeAt = l.Network, i
			set("network")
		}
		if l.AuditLog != "" {
			r.Network.AuditLog = l.AuditLog
			set("audit-log")
		}
		if l.AuditRotate != "" {
			r.Network.AuditRotate = l.AuditRotate
			set("audit-rotate")
		}
		if l.WorkDir != "" {
			r.WorkDir = l.WorkDir
			set("workdir.path")
		}
		if l.Home != "" {
			r.Home = l.Home
			set("home")
		}
		if l.KeepWorkDir != nil {
			r.KeepWorkDir = *l.KeepWorkDir
			set("workdir.keep")
		}
		for _, g := range l.Grants {
			p := filepath.Clean(g.Path)
			if _, seen := access[p]; !seen {
				order = append(order, p)
			}
			if g.Access != 0 {
				g.Access |= moat.READ // WRITE and EXEC imply it
			}
			access[p] |= g.Access
		}
		env = append(env, l.Env...)
		if l.Build != nil {
			r.Config.Build = *l.Build
			set("build")
		}
		if l.Enforcement != nil {
			r.Config.Enforcement = *l.Enforcement
			set("enforcement")
		}
		if l.AllowHomeWorkDir != nil {
			r.Config.AllowHomeWorkDir = *l.AllowHomeWorkDir
			set("allow-home-workdir")
		}
		r.Sockets = append(r.Sockets, l.Sockets...)
		mergeLimits(&r.Config, &l.Limits, set)
		mergePython(&r.Python, &l.Python, set) // python.go
	}
	for _, p := range order {
		r.Grants = append(r.Grants, moat.PathRequest{Path: p, Access: access[p]})
	}
	if r.Network.Mode == "" {
		r.Network.Mode = NetworkDeny
	}
	if err := r.mergeNetworkLists(layers, modeAt); err != nil {
		return Result{}, err
	}
	if err := r.checkNetwork(); err != nil {
		return Result{}, err
	}
	if err := r.checkPython(); err != nil {
		return Result{}, err
	}
	r.Config.Isolation = iso
	s := iso.Security().With(sec)
	r.Config.Security = &s
	r.Config.Env = mergeEnv(env)
	return r, nil
}

// mergeNetworkLists concatenates the allowed domains and local ranges of
// layers. A layer's list that the final mode does not use is an error,
// unless a later layer (modeAt) chose that mode and so overrode it.
func (r *Result) mergeNetworkLists(layers []Layer, modeAt int) error {
	mode := r.Network.Mode
	for i := range layers {
		l := &layers[i]
		overridden := modeAt > i
		if len(l.AllowDomains) > 0 {
			switch {
			case mode == NetworkAllowList:
				r.Network.AllowDomains = append(r.Network.AllowDomains, l.AllowDomains...)
			case !overridden:
				return fmt.Errorf("%s%s %q: needs %s allow-list", l.at("allow-domains"), l.spell("allow-domains"), l.AllowDomains[0], l.spell("network"))
			}
		}
		if len(l.AllowLocal) > 0 {
			switch {
			case mode != NetworkDeny:
				r.Network.AllowLocal = append(r.Network.AllowLocal, l.AllowLocal...)
			case !overridden:
				return fmt.Errorf("%s%s %q: needs %s allow-all or allow-list", l.at("allow-local"), l.spell("allow-local"), l.AllowLocal[0], l.spell("network"))
			}
		}
	}
	return nil
}

// checkNetwork checks the merged network settings against each other.
func (r *Result) checkNetwork() error {
	n := &r.Network
	if n.Mode == NetworkAllowList && len(n.AllowDomains) == 0 {
		l := r.layerOf("network")
		return fmt.Errorf("%s%s %q: no domain to allow; add %s", l.at("network"), l.spell("network"), n.Mode, l.spell("allow-domains"))
	}
	if n.AuditLog != "" && n.Mode == NetworkDeny {
		l := r.layerOf("audit-log")
		return fmt.Errorf("%s%s %q: needs %s allow-all or allow-list; with no network no proxy runs and there is nothing to record", l.at("audit-log"), l.spell("audit-log"), n.AuditLog, l.spell("network"))
	}
	if n.AuditRotate != "" && n.AuditLog == "" {
		l := r.layerOf("audit-rotate")
		return fmt.Errorf("%s%s %q: needs %s", l.at("audit-rotate"), l.spell("audit-rotate"), n.AuditRotate, l.spell("audit-log"))
	}
	return nil
}

// mergeLimits copies the limits and priorities that l sets into cfg and
// tells mark the key of each.
func mergeLimits(cfg *moat.Config, l *Limits, mark func(key string)) {
	count := func(key string, dst *int64, v *int64) {
		if v != nil {
			*dst = *v
			mark(key)
		}
	}
	count("limits.max-memory", &cfg.Limits.MemoryBytes, l.MemoryBytes)
	count("limits.max-cpu-time", &cfg.Limits.CPUSeconds, l.CPUSeconds)
	count("limits.max-file-size", &cfg.Limits.FileSizeBytes, l.FileSizeBytes)
	count("limits.max-processes", &cfg.Limits.Processes, l.Processes)
	count("limits.max-open-files", &cfg.Limits.OpenFiles, l.OpenFiles)
	count("limits.max-disk", &cfg.Limits.DiskBytes, l.DiskBytes)
	count("limits.max-disk-inodes", &cfg.Limits.DiskInodes, l.DiskInodes)
	if l.Timeout != nil {
		cfg.Limits.Timeout = *l.Timeout
		mark("limits.timeout")
	}
	if l.Nice != nil {
		cfg.Nice = *l.Nice
		mark("limits.nice")
	}
	if l.IOPriority != nil {
		cfg.IOPriority = *l.IOPriority
		mark("limits.io-priority")
	}
}
