package moat

import (
	"context"
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/pysandbox"
	"github.com/moat-sandbox/moat/internal/venv"
)

// VenvBackend is the tool that builds a venv. The zero value is
// [VenvAuto].
type VenvBackend int

const (
	// VenvAuto uses uv when it is on the host's PATH, and the
	// interpreter's venv module with pip otherwise.
	VenvAuto VenvBackend = iota
	// VenvUV uses uv; Create fails when uv is not installed.
	VenvUV
	// VenvPython uses the interpreter's venv module and the venv's pip.
	VenvPython
)

// String returns "auto", "uv" or "python".
func (b VenvBackend) String() string { return venv.Backend(b).String() }

// ParseVenvBackend parses "auto", "uv" or "python"; "" is auto.
func ParseVenvBackend(s string) (VenvBackend, error) {
	b, err := venv.ParseBackend(s)
	if err != nil {
		return VenvAuto, errorf("venv backend %q: %v", s, err)
	}
	return VenvBackend(b), nil
}

// VenvConfig describes a Python virtual environment that [VenvManager]
// builds. The zero value is a venv with no packages, from the host's
// python3, in the manager's cache.
type VenvConfig struct {
	// Path is the venv's directory. Empty means the manager's cache: one
	// venv per interpreter, package set and system site-packages switch,
	// reused by every later Create that asks for the same.
	Path string
	// Packages are pip requirement specifiers ("numpy", "pandas>=2").
	// Nil installs nothing.
	Packages []string
	// Python is the base interpreter, a name looked up on the host's PATH
	// or a path. Empty means python3.
	Python string
	// SystemSitePackages lets the venv see the interpreter's own
	// site-packages (python -m venv --system-site-packages), which is how
	// a distribution's compiled packages (Debian's python3-numpy) are
	// reached. False, the zero value, isolates the venv.
	SystemSitePackages bool
	// Backend is the tool that builds it. The zero value is [VenvAuto].
	Backend VenvBackend
	// IndexURL replaces pip's default index (--index-url). Empty keeps it.
	IndexURL string
	// FindLinks are local directories or URLs of distributions
	// (--find-links). Nil means none.
	FindLinks []string
	// NoIndex installs from FindLinks only (--no-index). False uses the
	// index.
	NoIndex bool
	// Mutable says the venv will be used with
	// [PythonConfig.AllowPipInstall]: a cached venv (Path empty) is then
	// one of its own, never the one read-only sandboxes reuse, so code
	// allowed to change it cannot change theirs. False shares the cache.
	Mutable bool
}

// VenvProgress is one step of [VenvManager.Create]. The zero value means
// nothing.
type VenvProgress struct {
	// Phase is "reuse", "create", "install" or "done".
	Phase string
	// Message is a line for a person: the step, or a line of pip's output.
	Message string
	// Done and Total count the requested packages the installer has
	// reached; Total is 0 outside the install phase.
	Done, Total int
}

// VenvManager builds venvs for sandboxes. The host makes a new venv with
// the trusted base interpreter only, isolated (-I, from "/", with an
// allow-list environment), and without pip; pip and the packages are
// installed in a sandbox of their own, whose only writable places are the
// venv and a build cache and whose network reaches only the package
// index. Nothing inside a venv ever runs on the host. The manifest that
// lets a later Create reuse a venv, and the build cache, are kept in the
// cache directory, outside the venv, written by the host after the install
// sandbox has exited and what it installed was checked. The zero value
// (and a nil *VenvManager) keeps its cache under the user's cache
// directory and reports no progress. Its methods are safe for concurrent
// use; Creates of one venv, in any process, take turns (on Unix), so the
// later ones reuse it.
type VenvManager struct {
	// CacheDir holds the venvs of VenvConfigs without a Path, and the
	// manifests and build caches of every venv. It must be a place no
	// sandbox can write. Empty means moat/venvs under [os.UserCacheDir].
	CacheDir string
	// Progress, when not nil, is called for each step of Create.
	Progress func(VenvProgress)
}

// Venv is a venv that exists. The zero value is not valid.
type Venv struct {
	// Path is the venv's directory, absolute, links resolved.
	Path string
	// Python is its interpreter, Path/bin/python.
	Python string
	// Reused is true when Create found it already matching and ran
	// nothing.
	Reused bool
}

// Create builds the venv cfg describes: with uv when present (or asked
// for), with the interpreter's venv module and pip otherwise; pip is
// seeded and cfg.Packages installed in the install sandbox (see
// [VenvManager]), which reaches only the index (nothing with NoIndex) and
// reads the FindLinks directories. It is idempotent: a venv whose
// recorded interpreter, package set and system site-packages switch match
// is reused without running anything. A path that holds something other
// than a venv, a missing interpreter, a failed install and a package the
// installer did not install are errors; a failed install carries pip's
// own message.
func (m *VenvManager) Create(ctx context.Context, cfg VenvConfig) (*Venv, error) {
	spec, err := m.spec(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(spec.Manifest), 0o700); err != nil {
		return nil, errorf("venv cache %q: %v", filepath.Dir(spec.Manifest), err)
	}
	unlock, err := pysandbox.Lock(spec.Manifest + ".lock")
	if err != nil {
		return nil, errorf("%w", err)
	}
	defer unlock()
	env, err := venv.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &Venv{Path: env.Path, Python: env.Python, Reused: env.Reused}, nil
}

// VenvPath returns where Create would build cfg: cfg.Path made absolute,
// or its place in the cache.
func (m *VenvManager) VenvPath(cfg VenvConfig) (string, error) {
	spec, err := m.spec(cfg)
	if err != nil {
		return "", err
	}
	return spec.Path, nil
}

// spec translates cfg for internal/venv, placing a venv without a path in
// the cache (internal/pysandbox).
func (m *VenvManager) spec(cfg VenvConfig) (venv.Spec, error) {
	root, err := moatStateRoot() // controljournal.go: it holds the pins of host tools
	if err != nil {
		return venv.Spec{}, err
	}
	s := venv.Spec{
		Path:               cfg.Path,
		Packages:           cfg.Packages,
		Python:             cfg.Python,
		SystemSitePackages: cfg.SystemSitePackages,
		Backend:            venv.Backend(cfg.Backend),
		Index:              venv.Index{URL: cfg.IndexURL, FindLinks: cfg.FindLinks, NoIndex: cfg.NoIndex},
		Install:            installVenv,
		LookPath:           pysandbox.LookPath(root),
	}
	if err := pysandbox.CheckInterpreter(root, cfg.Python); err != nil {
		return s, errorf("%w", err)
	}
	if m != nil && m.Progress != nil {
		progress := m.Progress
		s.Progress = func(e venv.Event) { progress(VenvProgress(e)) }
	}
	dir := ""
	if m != nil {
		dir = m.CacheDir
	}
	dir, err = pysandbox.CacheDir(dir, root)
	if err != nil {
		return s, errorf("%w", err)
	}
	if s.Path != "" {
		if s, err = pysandbox.Named(s, dir); err != nil {
			return s, errorf("%w", err)
		}
		return s, nil
	}
	return pysandbox.Cached(s, dir, cfg.Mutable)
}

// PythonConfig runs Python in the sandbox with a venv built beforehand.
// The zero value uses no venv: python3 from the sandbox's PATH, with
// MPLBACKEND=Agg.
type PythonConfig struct {
	// Venv is the directory of a venv that exists on the host, such as
	// [VenvManager.Create] makes. It must lie outside the working
	// directory. Inside the sandbox it is readable and executable, never
	// writable (unless AllowPipInstall), and so is the base interpreter's
	// installation. Empty means no venv.
	Venv string
	// AllowPipInstall makes the venv's site-packages and bin/ writable,
	// and executable, so pip (or code) may install into it; installing
	// from an index also needs a network policy that allows it. It gives
	// up write-xor-execute there, and what the sandbox installs stays in
	// the venv after it. False, the zero value, keeps the venv read and
	// execute only.
	AllowPipInstall bool
}

// DataSciencePackages are the packages of [PythonDataScience].
var DataSciencePackages = []string{"numpy", "pandas", "matplotlib", "scikit-learn"}

// PythonDev is heel's python-dev preset: a Config whose venv, built (or
// reused) from v by m, may be changed by pip in the sandbox
// (AllowPipInstall). A v without a Path gets a cached venv of its own,
// kept apart from the read-only ones. Every other field of the Config is
// its zero value.
func PythonDev(ctx context.Context, m *VenvManager, v VenvConfig) (Config, error) {
	v.Mutable = true
	env, err := m.Create(ctx, v)
	if err != nil {
		return Config{}, err
	}
	return Config{Python: &PythonConfig{Venv: env.Path, AllowPipInstall: true}}, nil
}

// PythonDataScience is heel's data-science preset: a Config whose venv
// holds [DataSciencePackages] (and v.Packages), with the system's
// site-packages visible, from m's cache of venvs keyed by their package
// set, so every run after the first reuses it without installing. Unlike
// heel's, the venv is read and execute only (no AllowPipInstall), because
// later runs share it. Every other field of the Config is its zero value.
func PythonDataScience(ctx context.Context, m *VenvManager, v VenvConfig) (Config, error) {
	v.Packages = append(append([]string(nil), DataSciencePackages...), v.Packages...)
	v.SystemSitePackages = true
	env, err := m.Create(ctx, v)
	if err != nil {
		return Config{}, err
	}
	return Config{Python: &PythonConfig{Venv: env.Path}}, nil
}

// CheckVenvPackage refuses a package specifier that pip would read as an
// option (a leading "-"), or that is empty or holds a control character.
func CheckVenvPackage(p string) error {
	if err := venv.CheckPackage(p); err != nil {
		return errorf("package %q: %v", p, err)
	}
	return nil
}

// CheckVenvIndex refuses index options pip would misread: an index URL
// that is not http, https or file, or is given with noIndex, and a
// find-links entry that is empty or starts with "-".
func CheckVenvIndex(indexURL string, findLinks []string, noIndex bool) error {
	if err := venv.CheckIndex(venv.Index{URL: indexURL, FindLinks: findLinks, NoIndex: noIndex}); err != nil {
		return errorf("%v", err)
	}
	return nil
}

// installVenv is the [venv.Installer] of [VenvManager]: it runs job's
// steps in a sandbox of their own, never on the host. The sandbox is at
// the strict level (system files only) with a fresh private working
// directory and home; besides its private temporary directories, its only
// writable places are the venv (read, write and execute, as pip's
// console scripts and compiled modules need) and the install's own build
// cache (read and write); the --find-links directories and a file: index
// are read-only; the base interpreter's installation, when it lies outside
// the system directories, is read and execute. Its network reaches only
// job.Hosts through moat's proxy, and nothing at all when there are none.
func installVenv(ctx context.Context, job venv.Job) error {
	grants := []Grant{
		{Path: job.Venv, Access: READ | WRITE | EXEC},
		{Path: job.Cache, Access: READ | WRITE},
	}
	for _, p := range job.Read {
		grants = append(grants, Grant{Path: p, Access: READ})
	}
	for _, p := range job.Exec {
		grants = append(grants, Grant{Path: p, Access: READ | EXEC})
	}
	if pre := filepath.Dir(filepath.Dir(job.Interpreter)); job.Interpreter != "" && pre != "/" && !paths.UnderAny(pre, hostview.SystemPathRoots) && pysandbox.IsPythonPrefix(pre) {
		grants = append(grants, Grant{Path: pre, Access: READ | EXEC})
	}
	var network NetworkPolicy = DenyAll()
	if len(job.Hosts) > 0 {
		allow, err := AllowList(job.Hosts...)
		if err != nil {
			return errorf("venv install: the index hosts: %v", err)
		}
		network = allow
	}
	sb, err := New(Config{
		Isolation: IsolationStrict,
		Grants:    grants,
		Network:   network,
		Env:       Env{Set: job.Env},
	})
	if err != nil {
		return err
	}
	for _, argv := range job.Steps {
		c := sb.CommandContext(ctx, argv[0], argv[1:]...)
		c.Stdout, c.Stderr = job.Stdout, job.Stderr
		if err = c.Run(); err != nil {
			break
		}
	}
	if cerr := sb.Close(); err == nil {
		err = cerr
	}
	return err
}
