package moat

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/moat-sandbox/moat/internal/cachehome"
	"github.com/moat-sandbox/moat/internal/runjournal"
	"github.com/moat-sandbox/moat/internal/spec"
)

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
	return cachehome.Layout{Root: root, Records: filepath.Join(state, cachehome.RecordsName)}, nil
}

// openCaches takes this run's cache stores (Config.KeepCaches) into k and
// links them into the fresh home home (internal/cachehome: Kept.Open),
// keyed by the working directory workDir and the digest of cfg. A
// platform without stores leaves the run a throwaway home.
func openCaches(k *cachehome.Kept, cfg *Config, workDir, home string) error {
	if !cfg.KeepCaches || !cachehome.Supported {
		return nil
	}
	policy, err := cacheDigest(cfg)
	if err != nil {
		return err
	}
	if err := k.Open(cacheLayout, workDir, home, policy); err != nil {
		return errorf("%w", err)
	}
	return nil
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

// protectStateRoot hides the user's moat state directory (journals, the
// quarantine) in view v, with every cache stores root: caches' own, and
// those other runs recorded there (internal/runjournal, internal/cachehome).
func protectStateRoot(v spec.View, caches *cachehome.Kept) spec.View {
	return runjournal.ProtectStateRoot(v, func(root string) []string {
		return append([]string{caches.Root(cacheLayout)}, cachehome.RecordedRoots(root)...)
	})
}
