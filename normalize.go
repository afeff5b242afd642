package moat

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Defaults applied to zero [Limits] fields.
const (
	DefaultFileSizeBytes = 4 << 30
	DefaultProcesses     = 1024
	DefaultOpenFiles     = 1024
)

// normalize validates cfg and fills in defaults. It does no I/O besides
// checking that granted paths exist.
func normalize(cfg Config) (Config, error) {
	if cfg.Nice < 0 || cfg.Nice > 19 {
		return cfg, errorf("nice %d: want 0 (unchanged) through 19; priority can only be lowered", cfg.Nice)
	}
	if cfg.IOPriority < IOPriorityDefault || cfg.IOPriority > IOPriorityBackground {
		return cfg, errorf("io priority %d: unknown", cfg.IOPriority)
	}
	if cfg.Isolation < IsolationStrict || cfg.Isolation > IsolationPermissive {
		return cfg, errorf("isolation %d: unknown", cfg.Isolation)
	}
	if cfg.Enforcement != Strict && cfg.Enforcement != BestEffort {
		return cfg, errorf("enforcement %d: unknown", cfg.Enforcement)
	}
	for _, kv := range cfg.Env.Set {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return cfg, errorf("env %q: want NAME=VALUE", kv)
		}
	}
	for _, k := range cfg.Env.Passthrough {
		if k == "" || strings.Contains(k, "=") {
			return cfg, errorf("env passthrough %q: want a variable name", k)
		}
	}
	if err := checkNetworkConfig(&cfg); err != nil {
		return cfg, err
	}
	grants, err := mergeGrants(cfg.Grants)
	if err != nil {
		return cfg, err
	}
	cfg.Grants = grants
	cfg.Limits = cfg.Limits.withDefaults()
	return cfg, nil
}

// mergeGrants checks each grant and unions grants of the same path.
// Identities are recorded later, by identify.
func mergeGrants(in []Grant) ([]Grant, error) {
	byPath := map[string]Access{}
	for _, g := range in {
		if g.Access == 0 || g.Access&^(READ|WRITE|EXEC) != 0 {
			return nil, errorf("grant %q: invalid access %d", g.Path, g.Access)
		}
		if !filepath.IsAbs(g.Path) || filepath.Clean(g.Path) != g.Path {
			return nil, errorf("grant %q: path must be absolute and clean", g.Path)
		}
		if err := checkExists(g.Path); err != nil {
			return nil, errorf("grant %q: %v", g.Path, err)
		}
		// Building a sandbox checks every component again without
		// following links: one that has become a link would move the grant.
		if err := checkNoLinks(g.Path); err != nil {
			return nil, err
		}
		byPath[g.Path] |= g.Access.normalize()
	}
	out := make([]Grant, 0, len(byPath))
	for p, a := range byPath {
		out = append(out, Grant{Path: p, Access: a})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
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
	l.MemoryBytes = def(l.MemoryBytes, defaultMemoryBytes())
	l.CPUSeconds = def(l.CPUSeconds, 0)
	l.FileSizeBytes = def(l.FileSizeBytes, DefaultFileSizeBytes)
	l.Processes = def(l.Processes, DefaultProcesses)
	l.OpenFiles = def(l.OpenFiles, defaultOpenFiles())
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
		return pathErr(err)
	}
	return nil
}
