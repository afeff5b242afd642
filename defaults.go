package moat

import (
	"os"
	"sort"

	"github.com/moat-sandbox/moat/internal/hostfacts"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/pysandbox"
)

// Defaults applied to zero [Limits] fields.
const (
	DefaultFileSizeBytes = 4 << 30
	DefaultProcesses     = 1024
	DefaultOpenFiles     = 1024
)

// normalize validates cfg ([Config.Validate], validate.go: no I/O), reads
// the host for what must fail at once (the granted paths exist, with no
// link on the way) and fills in defaults (the host's memory and open-file
// limits), with py, what readPythonHost read of the venv (nil: nothing,
// which refuses a venv). Everything else New reads of the host, it reads
// when it prepares the policy (backend.go: readHost).
func normalize(cfg Config, py *pysandbox.Host) (Config, error) {
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	cfg, err := pythonNormalize(cfg, py) // the venv's grants, below
	if err != nil {
		return cfg, err
	}
	if err := checkGrantPaths(cfg.Grants); err != nil {
		return cfg, err
	}
	cfg.Grants = mergeGrants(cfg.Grants)
	cfg.Limits = cfg.Limits.withDefaults()
	return cfg, nil
}

// checkGrantPaths checks that each grant, valid by [Config.Validate],
// exists and has no link on its way. Identities are recorded later, by
// readHost.
func checkGrantPaths(in []Grant) error {
	for _, g := range in {
		if err := checkExists(g.Path); err != nil {
			return errorf("grant %q: %v", g.Path, err)
		}
		// Building a sandbox checks every component again without
		// following links: one that has become a link would move the grant.
		if err := checkNoLinks(g.Path); err != nil {
			return err
		}
	}
	return nil
}

// mergeGrants unions grants of the same path, sorted by path.
func mergeGrants(in []Grant) []Grant {
	byPath := map[string]Access{}
	for _, g := range in {
		byPath[g.Path] |= g.Access.normalize()
	}
	out := make([]Grant, 0, len(byPath))
	for p, a := range byPath {
		out = append(out, Grant{Path: p, Access: a})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// withDefaults replaces zero fields by their defaults and negative ones by
// zero, which below this point means "no limit".
func (l Limits) withDefaults() Limits {
	def := func(v, d int64) int64 {
		switch {
		case v == 0:
			return d
		case v < 0:
			return 0
		}
		return v
	}
	l.MemoryBytes = def(l.MemoryBytes, hostfacts.HalfMemory())
	l.CPUSeconds = def(l.CPUSeconds, 0)
	l.FileSizeBytes = def(l.FileSizeBytes, DefaultFileSizeBytes)
	l.Processes = def(l.Processes, DefaultProcesses)
	l.OpenFiles = def(l.OpenFiles, hostfacts.OpenFiles(DefaultOpenFiles))
	l.DiskBytes = def(l.DiskBytes, -1) // resolved against free space at New
	if l.Timeout < 0 {
		l.Timeout = 0
	}
	return l
}

// checkExists reports a missing grant path, so it fails at New and not as a
// silent denial later.
func checkExists(path string) error {
	if _, err := os.Stat(path); err != nil {
		return paths.Bare(err)
	}
	return nil
}

// readPythonHost is the host read of cfg.Python, for New's preparation
// step: the venv opened, the working directory and the kept home
// resolved (internal/pysandbox). Without a venv it reads nothing.
func readPythonHost(cfg Config) pysandbox.Host {
	if cfg.Python == nil {
		return pysandbox.Host{}
	}
	return pysandbox.ReadHost(cfg.Python.Venv, cfg.WorkDir, cfg.Home)
}

// pythonNormalize applies cfg.Python to the rest of cfg, for normalize,
// from what readPythonHost read, without I/O: MPLBACKEND=Agg unless the
// caller sets or passes it, and the grants of the venv: read and execute
// for the venv and the base interpreter's installation, write too for
// site-packages and bin/ with AllowPipInstall. A venv that is not one, or
// lies where the sandbox writes (the working directory, or a writable
// grant without AllowPipInstall), is refused: it could not stay read-only
// there.
func pythonNormalize(cfg Config, h *pysandbox.Host) (Config, error) {
	if cfg.Python == nil {
		return cfg, nil
	}
	p := *cfg.Python
	cfg.Python = &p
	if !pysandbox.SetsEnv(cfg.Env.Passthrough, cfg.Env.Set, "MPLBACKEND") {
		cfg.Env.Set = append([]string{pysandbox.MPLBackend}, cfg.Env.Set...)
	}
	if p.Venv == "" {
		return cfg, nil
	}
	if h == nil {
		return cfg, errorf("python venv %q: not read from the host", p.Venv)
	}
	if h.Err != nil {
		return cfg, h.Err
	}
	st := pysandbox.Settings{AllowPipInstall: p.AllowPipInstall, Permissive: cfg.Isolation == IsolationPermissive}
	for _, g := range cfg.Grants {
		if g.Access.CanWrite() {
			st.WritableGrants = append(st.WritableGrants, g.Path)
		}
	}
	planned, err := pysandbox.Plan(*h, st)
	if err != nil {
		return cfg, errorf("%w", err)
	}
	p.Venv = h.Env.Path
	grants := make([]Grant, 0, len(planned))
	for _, g := range planned {
		a := READ | EXEC
		if g.Write {
			a |= WRITE
		}
		grants = append(grants, Grant{Path: g.Path, Access: a})
	}
	cfg.Grants = append(append([]Grant(nil), cfg.Grants...), grants...)
	return cfg, nil
}
