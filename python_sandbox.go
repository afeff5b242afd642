package moat

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"

	"github.com/moat-sandbox/moat/internal/pysandbox"
)

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
