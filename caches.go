package moat

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/moat-sandbox/moat/internal/cachehome"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/runjournal"
)

// cacheHomesRecords is the directory of the cache stores' records in
// moat's state directory.
const cacheHomesRecords = "cache-homes"

// cacheLayout says where the cache stores and their records live; tests
// replace it.
var cacheLayout = func() (cachehome.Layout, error) {
	state, err := moatStateRoot() // journal.go
	if err != nil {
		return cachehome.Layout{}, err
	}
	home := os.Getenv("HOME")
	if home == "" {
		home = runjournal.PasswdHome()
	}
	root, err := cachehome.DefaultRoot(os.Getenv("XDG_CACHE_HOME"), home)
	if err != nil {
		return cachehome.Layout{}, err
	}
	return cachehome.Layout{Root: root, Records: filepath.Join(state, cacheHomesRecords)}, nil
}

// openCaches takes this run's cache stores (Config.KeepCaches) and links
// them into the fresh home: only the cache directories persist, never the
// home's config or start-up files. The key is the working directory's
// identity and the digest of the policy. Another run holding the same key
// leaves this one a throwaway home, as do a platform without stores and
// stores that cannot be made (no usable HOME) or used safely (inside the
// working directory or the state directory, or not what moat made).
func (s *Sandbox) openCaches() error {
	if !s.cfg.KeepCaches || !cachehome.Supported {
		return nil
	}
	policy, err := cacheDigest(&s.cfg)
	if err != nil {
		return err
	}
	project, err := cachehome.Identify(s.dirs.Work)
	if errors.Is(err, cachehome.ErrNoIdentity) {
		return nil // a re-made directory could not be told apart: a throwaway home
	}
	if err != nil {
		return errorf("keep caches: working directory %q: %w", s.dirs.Work, err)
	}
	layout, err := cacheLayout()
	if err != nil {
		return nil // no usable cache directory (no HOME, say): a throwaway home
	}
	root, err := filepath.EvalSymlinks(filepath.Dir(layout.Root))
	if err == nil {
		root = filepath.Join(root, filepath.Base(layout.Root))
	} else {
		root = layout.Root
	}
	// Stores inside the working directory (a home working directory, say)
	// would be writable through it, all of them; stores in the state
	// directory would show it. Either way: a throwaway home.
	if paths.Under(root, s.dirs.Work) || paths.Under(s.dirs.Work, root) || paths.Under(root, filepath.Dir(layout.Records)) {
		return nil
	}
	lease, err := cachehome.Open(layout, project, policy)
	if err != nil {
		// Another run holds them (cachehome.ErrBusy), or the stores
		// cannot be made or are not what moat made: a throwaway home,
		// which keeps nothing and trusts nothing.
		return nil
	}
	if err := lease.Link(s.dirs.PrivateHome()); err != nil {
		lease.Close(1)
		return errorf("keep caches: %w", err)
	}
	s.caches, s.cacheLayout = lease, layout
	return nil
}

// cacheRoot is where every project's cache stores live, resolved, which
// every sandbox's view hides (a run's own stores are granted back), so
// that no run, at any isolation level, reads or writes another policy's
// caches; "" when there is no such place.
func (s *Sandbox) cacheRoot() string {
	l := s.cacheLayout
	if l.Root == "" {
		var err error
		if l, err = cacheLayout(); err != nil {
			return ""
		}
	}
	if r, err := filepath.EvalSymlinks(l.Root); err == nil {
		return r
	}
	return l.Root
}

// recordedCacheRoots are the stores roots that runs with other
// environments used (cachehome.Roots, in the state directory state),
// resolved: every sandbox's view hides them as it hides cacheRoot, so a
// grant over another XDG_CACHE_HOME shows no other policy's stores. A
// record that cannot be read hides nothing more.
func recordedCacheRoots(state string) []string {
	roots, _ := cachehome.Roots(filepath.Join(state, cacheHomesRecords))
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		if res, err := filepath.EvalSymlinks(r); err == nil {
			r = res
		}
		out = append(out, r)
	}
	return out
}

// cacheStores are the run's cache store directories: writable, never
// executable, and outliving the run. Nil without kept caches.
func (s *Sandbox) cacheStores() []string {
	if s.caches == nil {
		return nil
	}
	return s.caches.Stores()
}

// releaseCaches records the stores' use and size and releases them.
func (s *Sandbox) releaseCaches() error {
	if s.caches == nil {
		return nil
	}
	err := s.caches.Close(0)
	s.caches = nil
	if err != nil {
		return errorf("%w", err)
	}
	return nil
}

// pruneCaches bounds the stores' age and size, at Close and never on the
// start path; its failure does not fail Close, and the next Close tries
// again.
func (s *Sandbox) pruneCaches() {
	if s.cacheLayout.Root == "" {
		return
	}
	_, _ = cachehome.Prune(s.cacheLayout, cachehome.Bounds{}, time.Now())
}

// cacheDigest digests everything in cfg that changes what a run may reach
// or hold, so that runs of different policies never share a store: the
// isolation level, the protections, the enforcement, the network policy
// and local destinations, grants, sockets, the environment (names, and the
// values under the key's secret), build mode, Python, the IPC commands and
// the file-system rules. Limits and priorities are left out: they bound
// a run, not what it reaches. A network policy or resolver moat cannot
// describe is an error.
func cacheDigest(cfg *Config) (string, error) {
	d := cachehome.NewDigest()
	d.Add("isolation", strconv.Itoa(int(cfg.Isolation)))
	d.Add("security", fmt.Sprintf("%+v", cfg.security()))
	d.Add("enforcement", strconv.Itoa(int(cfg.Enforcement)))
	net, err := describeNetwork(cfg.Network)
	if err != nil {
		return "", err
	}
	d.Add("network", net...)
	if cfg.Resolver != nil {
		return "", &ConfigError{Field: "keep caches", Value: fmt.Sprintf("%T", cfg.Resolver), Problem: "a custom Resolver cannot be told apart from another, so its runs cannot keep caches safely; leave KeepCaches off"}
	}
	var local []string
	for _, p := range cfg.AllowLocal {
		local = append(local, p.String())
	}
	d.AddSet("allow-local", local...)
	var grants []string
	for _, g := range cfg.Grants {
		grants = append(grants, g.Access.String()+" "+g.Path)
	}
	d.AddSet("grants", grants...)
	d.AddSet("sockets", cfg.Sockets...)
	var pass []string
	for _, k := range cfg.Env.Passthrough {
		v, ok := os.LookupEnv(k)
		pass = append(pass, k+"\x00"+strconv.FormatBool(ok)+"\x00"+hashValue(v))
	}
	d.AddSet("env-passthrough", pass...)
	var set []string
	for _, kv := range cfg.Env.Set {
		k, v, _ := cutEnv(kv)
		set = append(set, k+"\x00"+hashValue(v))
	}
	d.Add("env-set", set...)
	d.Add("build", strconv.FormatBool(cfg.Build))
	if p := cfg.Python; p != nil {
		d.Add("python", p.Venv, strconv.FormatBool(p.AllowPipInstall))
	}
	if cfg.IPC != nil {
		var names []string
		for _, c := range cfg.IPC.Commands() {
			names = append(names, c.Name)
		}
		d.AddSet("ipc", names...)
	}
	d.AddSet("deny", cfg.Deny...)
	d.AddSet("read-only", cfg.ReadOnly...)
	d.AddSet("seal", cfg.Seal...)
	var virt []string
	for p, c := range cfg.VirtualFiles {
		virt = append(virt, p+"\x00"+hashValue(c))
	}
	d.AddSet("virtual", virt...)
	d.Add("hide-proc", strconv.FormatBool(cfg.HideProc))
	d.Add("allow-home-workdir", strconv.FormatBool(cfg.AllowHomeWorkDir))
	return d.Sum(), nil
}

// describeNetwork spells the network policies moat knows; any other is an
// error, since its decisions cannot be compared.
func describeNetwork(p NetworkPolicy) ([]string, error) {
	for {
		a, ok := p.(*AuditedPolicy)
		if !ok {
			break
		}
		p = a.Policy() // the log changes no decision
	}
	switch q := p.(type) {
	case nil, denyAll:
		return []string{"deny"}, nil
	case allowAll:
		return []string{"all"}, nil
	case *AllowListPolicy:
		if q == nil {
			return []string{"deny"}, nil
		}
		pats := append([]string{"list"}, q.Patterns()...)
		sort.Strings(pats[1:])
		return pats, nil
	}
	return nil, &ConfigError{Field: "keep caches", Value: fmt.Sprintf("%T", p), Problem: "a custom network policy cannot be told apart from another, so its runs cannot keep caches safely; leave KeepCaches off"}
}

// hashValue is a value's SHA-256; the key's HMAC keeps even a short
// secret from being guessed from the key.
func hashValue(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

func cutEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
