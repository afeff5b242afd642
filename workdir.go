package moat

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/moat-sandbox/moat/internal/cachehome"
	"github.com/moat-sandbox/moat/internal/runjournal"
	"github.com/moat-sandbox/moat/internal/spec"
	"github.com/moat-sandbox/moat/internal/statedir"
	"github.com/moat-sandbox/moat/internal/workdircheck"
)

// The sandbox's places on the host, which New prepares and Close releases,
// in this order: the checks of a supplied working directory, home and
// grants; the state and working directories (internal/statedir); the kept
// caches (internal/cachehome, keyed by cacheDigest); the run journal and
// the git control check of the writable places (internal/runjournal).

// CheckWorkDir reports why dir cannot be a supplied working directory, or
// nil. dir is resolved first; one that does not exist is left to [New] to
// report. It refuses the root, the kernel's pseudo file systems and the
// system directories, a directory the user cannot list or write, and,
// unless allowHome, a home directory, a directory holding one, one of the
// home's control places (~/.local/bin, ~/.config, ~/.ssh, ...) or a
// directory holding one, and one that holds a directory of PATH: all of
// them would let the sandbox change what runs later on the host.
func CheckWorkDir(dir string, allowHome bool) error {
	return placeError(workdircheck.WorkDir(dir, allowHome))
}

// CheckHome reports why dir cannot be a sandbox's kept home
// ([Config.Home], the CLI's --home), or nil. It must be an existing
// directory of the user's, and not a place whose files run or are trusted
// later outside the sandbox: the user's real home, a directory holding it,
// ~/.local/bin, ~/.config and the like, a directory holding one of PATH's
// (the rules of [CheckWorkDir] without AllowHomeWorkDir).
func CheckHome(dir string) error {
	_, err := workdircheck.Home(dir, ToolchainPaths)
	return placeError(err)
}

// placeError gives a place refused by internal/workdircheck as a
// *PlaceError, inside a *SettingError when a setting would lift it or it
// names one; other errors, and nil, are returned as they are.
func placeError(err error) error {
	var e *workdircheck.Error
	if errors.As(err, &e) {
		pe := &PlaceError{Subject: e.Subject, Path: e.Path, Problem: e.Problem, unsafe: e.Unsafe}
		if e.Setting != "" {
			return settingError(e.Setting, pe)
		}
		return pe
	}
	return err
}

// checkPlaces refuses, before anything is created, a supplied working
// directory that [CheckWorkDir] refuses, a grant of the root, a place in
// moat's state directory (internal/workdircheck), too few open files, and
// an audit log the sandbox could write.
func checkPlaces(cfg *Config) error {
	if cfg.WorkDir != "" {
		if err := CheckWorkDir(cfg.WorkDir, cfg.AllowHomeWorkDir); err != nil {
			return err
		}
	}
	grants := make([]string, len(cfg.Grants))
	for i, g := range cfg.Grants {
		grants[i] = g.Path
	}
	if err := workdircheck.Grants(grants); err != nil {
		return placeError(err)
	}
	if root, err := moatStateRoot(); err == nil { // below; if it fails, New fails on the journal with the reason
		if err := workdircheck.StatePlaces(root, cfg.WorkDir, cfg.Home, grants); err != nil {
			return placeError(err)
		}
	}
	if err := workdircheck.ServePlaces(serveRuntimeDirs(), cfg.WorkDir, cfg.Home, grants); err != nil {
		return placeError(err)
	}
	if err := checkOpenFiles(cfg.Limits.OpenFiles); err != nil { // validate.go
		return err
	}
	return checkAuditLogPlace(cfg)
}

// prepareWorkDir makes the sandbox's host directories (internal/statedir):
// its state directory first, so that its owner marker exists before an
// automatic working directory does (the sweep relies on it), then the
// automatic working directory, or the supplied one checked. Either way the
// stored paths are absolute and fully resolved, since the kernel enforces
// rules on what a path resolves to. On error nothing is left behind.
func (s *Sandbox) prepareWorkDir() error {
	if err := checkPlaces(&s.cfg); err != nil {
		return err
	}
	home, err := workdircheck.HomeConfig(s.cfg.Home, s.cfg.WorkDir, ToolchainPaths)
	if err != nil {
		return placeError(err)
	}
	base, err := statedir.Base(s.cfg.WorkDir)
	if err != nil {
		return errorf("%w", err)
	}
	state, err := statedir.NewState(base, s.id, home == "")
	if err != nil {
		return errorf("%w", err)
	}
	s.dirs.State, s.dirs.Home = state, home
	if s.cfg.WorkDir == "" {
		s.dirs.Work, err = statedir.NewWorkDir(state, s.id)
		s.dirs.Auto = err == nil
	} else {
		s.dirs.Work, err = statedir.ResolveWorkDir(s.cfg.WorkDir)
	}
	if err != nil {
		s.removeWorkDir()
		return errorf("%w", err)
	}
	if err := openCaches(&s.caches, &s.cfg, s.dirs.Work, s.dirs.PrivateHome()); err != nil { // below
		s.removeWorkDir()
		return err
	}
	return nil
}

// removeWorkDir releases the kept caches, then removes the automatic
// working directory and the state directory (private temp and home), in
// the order statedir.Dirs.Remove gives.
func (s *Sandbox) removeWorkDir() error {
	cacheErr := s.caches.Release() // internal/cachehome
	if cacheErr != nil {
		cacheErr = errorf("%w", cacheErr)
	}
	if err := s.dirs.Remove(); err != nil {
		return errorf("%w", err)
	}
	return cacheErr
}

// The run journal, its crash sweep, the quarantine and the git control
// check of the writable places live in internal/runjournal. New opens the
// run there before any command runs (openJournal) and Close checks and
// closes it once every sandboxed process is dead (closeJournal).

// openJournal sweeps what runs killed before Close left, records the git
// control paths of the places whose content outlives the sandbox, writes
// the run journal and records the outliving places; New calls it before
// any command can run. It fails closed.
func (s *Sandbox) openJournal() error {
	// The git places: a supplied working directory and the writable
	// grants. An automatic working directory is removed by Close, so
	// nothing in it can run later.
	var places []string
	if !s.dirs.Auto && s.dirs.Work != "" {
		places = append(places, s.dirs.Work)
	}
	for _, g := range s.cfg.Grants {
		if g.Access&WRITE != 0 {
			places = append(places, g.Path)
		}
	}
	// The other places it can write whose content outlives it: a
	// supplied home, the kept cache stores and a venv it may install
	// into.
	var outliving []string
	if s.dirs.Home != "" {
		outliving = append(outliving, s.dirs.Home)
	}
	outliving = append(outliving, s.caches.Stores()...)
	if p := s.cfg.Python; p != nil && p.AllowPipInstall && p.Venv != "" {
		outliving = append(outliving, p.Venv)
	}
	run, err := runjournal.Open(runjournal.Config{ID: s.id, Places: places, Outliving: outliving, Deny: s.cfg.Deny,
		Hooks: runjournal.Hooks{Refuse: func(f runjournal.Found) {
			s.refused.Add(Refusal{Kind: f.Kind, Subject: f.Subject, Detail: f.Detail})
		}}})
	if err != nil {
		return errorf("%w", err)
	}
	s.journal = run
	return nil
}

// closeJournal neutralises the git control paths the run created or
// changed, then deletes the journal; Close calls it once no sandboxed
// process is left.
func (s *Sandbox) closeJournal() {
	var creatable int64
	if s.disk.Inodes() > 0 {
		// Every command had that many inodes to make directories with:
		// the check reads as many more directories as New saw.
		n, w := s.disk.Inodes(), max(s.disk.Watches(), 1)
		if n > math.MaxInt64/w {
			n = math.MaxInt64
		} else {
			n *= w
		}
		creatable = n
	}
	s.journal.CheckGit(creatable)
	s.journal.Close() // the run is undone: placeholders gone, entries quarantined
}

// moatStateRoot is the user's moat state directory
// (runjournal.StateRoot).
func moatStateRoot() (string, error) {
	root, err := runjournal.StateRoot()
	if err != nil {
		return "", errorf("%w", err)
	}
	return root, nil
}

// StateDir returns moat's per-user state directory, making it (0700) if
// needed: run journals, the quarantine, the record of the places that
// sandboxes could write, and the files the user trusts. Every sandbox's
// view hides it. An error means none could be made safe.
func StateDir() (string, error) { return moatStateRoot() }

// cacheLayout says where the cache stores and their records live; tests
// replace it.
var cacheLayout = func() (cachehome.Layout, error) {
	state, err := moatStateRoot() // above
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
		more := append([]string{caches.Root(cacheLayout)}, cachehome.RecordedRoots(root)...)
		for _, d := range serveRuntimeDirs() {
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				more = append(more, d)
			}
		}
		return more
	})
}

// serveRuntimeDirs are where moat serve keeps its socket: hidden from
// every view, and refused as a place (checkPlaces).
func serveRuntimeDirs() []string {
	return statedir.ServeRuntimeDirs(os.Getenv("XDG_RUNTIME_DIR"), os.Getuid())
}
