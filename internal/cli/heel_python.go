package cli

import (
	"context"
	"os"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

// configVenv builds the venv that the config file's [python] table
// describes (VenvManager: the packages install in a sandbox of their own,
// not on the host as heel does), for moat run and moat shell: nil when the
// file has no such table (or the command is moat python, which builds its
// own). Progress goes to w.
func (f *sandboxFlags) configVenv(w *os.File) (*moat.PythonConfig, error) {
	if f.python != nil {
		return nil, nil
	}
	res, err := f.settings()
	if err != nil {
		return nil, err
	}
	if pythonUnset(res.Python) {
		return nil, nil
	}
	vc, err := res.Python.VenvConfig()
	if err != nil {
		return nil, usagef("%s", err)
	}
	mgr := &moat.VenvManager{Progress: venvProgress(w)}
	v, err := mgr.Create(context.Background(), vc)
	if err != nil {
		return nil, fail(err)
	}
	return &moat.PythonConfig{Venv: v.Path, AllowPipInstall: res.Python.AllowPip()}, nil
}

// pythonUnset reports whether no layer set anything of [python].
func pythonUnset(p policy.Python) bool {
	return p.Venv == "" && len(p.Packages) == 0 && p.Interpreter == "" && p.SystemSitePackages == nil &&
		p.VenvBackend == "" && p.IndexURL == "" && len(p.FindLinks) == 0 && p.NoIndex == nil && p.AllowPipInstall == nil
}

// activateVenv gives cmd the environment of the sandbox's venv, as an
// activated venv has it: VIRTUAL_ENV, and PATH with the venv's bin first,
// so python3 and pip are the venv's. A sandbox without one changes nothing.
func activateVenv(sb *moat.Sandbox, cmd *moat.Cmd, py *moat.PythonConfig) {
	if py == nil {
		return
	}
	cmd.Env = append(cmd.Env, sb.PythonCommand().Env...)
}
