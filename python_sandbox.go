package moat

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/venv"
)

// mplBackend is what model-written plotting code gets unless the caller
// chooses: matplotlib's file-only backend, since a sandbox has no display.
const mplBackend = "MPLBACKEND=Agg"

// validate checks what can be checked of p without I/O: a venv path is
// absolute and clean. A nil p passes.
func (p *PythonConfig) validate() error {
	if p == nil || p.Venv == "" {
		return nil
	}
	if !filepath.IsAbs(p.Venv) || filepath.Clean(p.Venv) != p.Venv {
		return &ConfigError{Field: "python venv", Value: strconv.Quote(p.Venv), Problem: "path must be absolute and clean"}
	}
	return nil
}

// pythonNormalize applies cfg.Python to the rest of cfg, for normalize:
// MPLBACKEND=Agg unless the caller sets or passes it, and the grants of
// the venv: read and execute for the venv and the base interpreter's
// installation, write too for site-packages and bin/ with
// AllowPipInstall. A venv that is not one, or lies where the sandbox
// writes (the working directory, or a writable grant without
// AllowPipInstall), is refused: it could not stay read-only there.
func pythonNormalize(cfg Config) (Config, error) {
	if cfg.Python == nil {
		return cfg, nil
	}
	p := *cfg.Python
	cfg.Python = &p
	if !setsEnv(cfg.Env, "MPLBACKEND") {
		cfg.Env.Set = append([]string{mplBackend}, cfg.Env.Set...)
	}
	if p.Venv == "" {
		return cfg, nil
	}
	env, err := venv.Open(p.Venv)
	if err != nil {
		return cfg, err
	}
	p.Venv = env.Path
	if cfg.WorkDir != "" {
		if wd, err := filepath.EvalSymlinks(cfg.WorkDir); err == nil {
			if wd, err = filepath.Abs(wd); err == nil && paths.Under(env.Path, wd) {
				return cfg, errorf("python venv %q: inside the working directory %q, which the sandbox writes, so it cannot stay read-only; build it outside (VenvManager.Create), or let the code make its own venv there in build mode (Config.Build)", env.Path, wd)
			}
		}
	}
	if !p.AllowPipInstall {
		if err := venvWritable(cfg, env.Path); err != nil {
			return cfg, err
		}
	}
	grants := []Grant{{Path: env.Path, Access: READ | EXEC}}
	if pre := env.Prefix; pre != "/" && !paths.UnderAny(pre, hostview.SystemPathRoots) && isPythonPrefix(pre) {
		grants = append(grants, Grant{Path: pre, Access: READ | EXEC})
	}
	if p.AllowPipInstall {
		for _, sp := range append([]string{filepath.Join(env.Path, "bin")}, env.SitePackages...) {
			grants = append(grants, Grant{Path: sp, Access: READ | WRITE | EXEC})
		}
	}
	cfg.Grants = append(append([]Grant(nil), cfg.Grants...), grants...)
	return cfg, nil
}

// venvWritable refuses a venv that the sandbox could write although
// AllowPipInstall is off: at the permissive level (which writes nearly
// everywhere), under or over a writable grant, or in the kept home.
func venvWritable(cfg Config, venvPath string) error {
	const fix = "set AllowPipInstall (--allow-pip-install)"
	if cfg.Isolation == IsolationPermissive {
		return errorf("python venv %q: the permissive level lets the sandbox write nearly everywhere, so the venv cannot stay read-only; %s, or use the default or strict level", venvPath, fix)
	}
	for _, g := range cfg.Grants {
		if g.Access.CanWrite() && (paths.Under(venvPath, g.Path) || paths.Under(g.Path, venvPath)) {
			return errorf("python venv %q: overlaps the writable grant %q, so it cannot stay read-only; %s, or grant less", venvPath, g.Path, fix)
		}
	}
	if cfg.Home != "" {
		if h, err := filepath.EvalSymlinks(cfg.Home); err == nil && paths.Under(venvPath, h) {
			return errorf("python venv %q: inside the kept home %q, which the sandbox writes, so it cannot stay read-only; %s, or build it elsewhere", venvPath, h, fix)
		}
	}
	return nil
}

// isPythonPrefix reports whether dir looks like a Python installation, a
// lib/pythonX.Y under it, so that an interpreter copied into some other
// directory (a home's bin/) does not open that directory's parent.
func isPythonPrefix(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "lib", "python3*", "os.py"))
	return len(m) > 0
}

// setsEnv reports whether e sets or passes through the variable name.
func setsEnv(e Env, name string) bool {
	for _, k := range e.Passthrough {
		if k == name {
			return true
		}
	}
	for _, kv := range e.Set {
		if k, _, _ := strings.Cut(kv, "="); k == name {
			return true
		}
	}
	return false
}

// PythonCommand returns a [Cmd] that runs the Python interpreter with args:
// the venv's bin/python with VIRTUAL_ENV set and the venv's bin/ first on
// PATH when [Config.Python] names a venv, python3 from the sandbox's PATH
// otherwise. Its Env holds those entries; append to it rather than
// replace it.
func (s *Sandbox) PythonCommand(args ...string) *Cmd {
	name, env := s.pythonExec()
	c := s.newCmd(name, args)
	c.Env = env
	return c
}

// pythonExec is the interpreter PythonCommand runs and the environment it
// adds.
func (s *Sandbox) pythonExec() (string, []string) {
	env := []string{}
	if lookupEnv(s.env, "MPLBACKEND") == "" && !setsEnv(s.cfg.Env, "MPLBACKEND") {
		env = append(env, mplBackend)
	}
	p := s.cfg.Python
	if p == nil || p.Venv == "" {
		return "python3", env
	}
	bin := filepath.Join(p.Venv, "bin")
	dirs := []string{bin}
	if s.ipc != nil {
		// The IPC shims stay first: with AllowPipInstall bin/ is
		// writable, and a program put there must not shadow one.
		dirs = []string{s.ipc.shims, bin}
	}
	for _, d := range filepath.SplitList(lookupEnv(s.env, "PATH")) {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	path := strings.Join(dirs, string(os.PathListSeparator))
	return filepath.Join(bin, "python"), append(env, "VIRTUAL_ENV="+p.Venv, "PATH="+path)
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
