package moat

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/pysandbox"
	"github.com/moat-sandbox/moat/internal/venv"
)

// PythonCommand returns a [Cmd] that runs the Python interpreter with args:
// the venv's bin/python with VIRTUAL_ENV set and the venv's bin/ first on
// PATH when [Config.Python] names a venv, python3 from the sandbox's PATH
// otherwise. Its Env holds those entries; append to it rather than
// replace it.
func (s *Sandbox) PythonCommand(args ...string) *Cmd {
	venvDir := ""
	if p := s.cfg.Python; p != nil {
		venvDir = p.Venv
	}
	mplSet := lookupEnv(s.env, "MPLBACKEND") != "" || pysandbox.SetsEnv(s.cfg.Env.Passthrough, s.cfg.Env.Set, "MPLBACKEND")
	name, env := pysandbox.Exec(venvDir, s.ipc.ShimDir(), lookupEnv(s.env, "PATH"), mplSet)
	c := s.newCmd(name, args)
	c.Env = env
	return c
}

// PythonResult is what the code of [Sandbox.RunPython] printed and how it
// ended. The zero value is code that printed nothing and exited 0.
type PythonResult struct {
	// Stdout and Stderr are the code's output; a traceback is in Stderr.
	Stdout, Stderr []byte
	// ExitCode is the interpreter's exit status: 0, 1 for an uncaught
	// exception or a syntax error, 128+N after signal N, -1 if it did not
	// start.
	ExitCode int
}

// RunPython runs code with the sandbox's interpreter ([Sandbox.PythonCommand],
// python -c code) in the working directory and returns what it printed.
// The error is nil when the code exited 0; an [*ExitError] when it exited
// otherwise (a traceback, sys.exit(3)), with the result filled in; another
// error when it could not start. ctx kills the whole process tree when it
// is done first.
func (s *Sandbox) RunPython(ctx context.Context, code string) (PythonResult, error) {
	if ctx == nil {
		panic("moat: nil Context")
	}
	c := s.PythonCommand("-c", code)
	c.ctx = ctx
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	r := PythonResult{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	var ee *ExitError
	switch {
	case errors.As(err, &ee):
		r.ExitCode = ee.StatusCode()
	case err != nil:
		r.ExitCode = -1
	}
	return r, err
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
	root, err := moatStateRoot() // workdir.go: it holds the pins of host tools
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
