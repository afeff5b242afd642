package pysandbox

import (
	"fmt"
	"path/filepath"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/venv"
)

// Host is what the host holds of a sandbox's venv, read once by
// [ReadHost] in New's preparation step, so that [Plan] reads nothing. The
// zero value is no venv.
type Host struct {
	// Env is the venv, opened; nil without one or when Err is set.
	Env *venv.Env
	// Err is why the venv could not be opened, as [venv.Open] said it;
	// nil when it was, or without a venv.
	Err error
	// WorkDir is the working directory, absolute with links resolved;
	// empty without one or when it cannot be resolved.
	WorkDir string
	// Home is the kept home with links resolved; empty without one or
	// when it cannot be resolved.
	Home string
	// PythonPrefix reports whether Env.Prefix looks like a Python
	// installation (see [IsPythonPrefix]). False without a venv.
	PythonPrefix bool
}

// ReadHost opens the venv at venvPath, when that is an absolute, clean
// path (the checks of the configuration refuse any other), and resolves
// the working directory and the kept home it must lie outside.
func ReadHost(venvPath, workDir, home string) Host {
	var h Host
	if venvPath == "" || !filepath.IsAbs(venvPath) || filepath.Clean(venvPath) != venvPath {
		return h
	}
	h.Env, h.Err = venv.Open(venvPath)
	if h.Err != nil {
		h.Env = nil
		return h
	}
	if workDir != "" {
		if wd, err := filepath.EvalSymlinks(workDir); err == nil {
			if wd, err = filepath.Abs(wd); err == nil {
				h.WorkDir = wd
			}
		}
	}
	if home != "" {
		if r, err := filepath.EvalSymlinks(home); err == nil {
			h.Home = r
		}
	}
	h.PythonPrefix = IsPythonPrefix(h.Env.Prefix)
	return h
}

// Settings are what of the sandbox's configuration the venv's grants
// depend on. The zero value is a read-only venv at the default or strict
// level with no writable grant.
type Settings struct {
	// AllowPipInstall makes site-packages and bin/ writable.
	AllowPipInstall bool
	// Permissive is the permissive isolation level.
	Permissive bool
	// WritableGrants are the paths of the writable grants.
	WritableGrants []string
}

// Grant is a grant of a venv's path: read and execute, write too when
// Write. The zero value is not valid.
type Grant struct {
	// Path is absolute.
	Path string
	// Write adds write access.
	Write bool
}

// Plan is the grants of the venv h read: read and execute for the venv
// and the base interpreter's installation, write too for site-packages
// and bin/ with AllowPipInstall. A venv that lies where the sandbox writes
// (the working directory, or a writable grant without AllowPipInstall) is
// refused: it could not stay read-only there. It does no I/O; h.Err is
// the caller's to return first. A nil h.Env has no grants.
func Plan(h Host, s Settings) ([]Grant, error) {
	env := h.Env
	if env == nil {
		return nil, nil
	}
	if h.WorkDir != "" && paths.Under(env.Path, h.WorkDir) {
		return nil, fmt.Errorf("python venv %q: inside the working directory %q, which the sandbox writes, so it cannot stay read-only; build it outside (VenvManager.Create), or let the code make its own venv there in build mode (Config.Build)", env.Path, h.WorkDir)
	}
	if !s.AllowPipInstall {
		if err := venvWritable(h, s, env.Path); err != nil {
			return nil, err
		}
	}
	grants := []Grant{{Path: env.Path}}
	if pre := env.Prefix; pre != "/" && !paths.UnderAny(pre, hostview.SystemPathRoots) && h.PythonPrefix {
		grants = append(grants, Grant{Path: pre})
	}
	if s.AllowPipInstall {
		for _, sp := range append([]string{filepath.Join(env.Path, "bin")}, env.SitePackages...) {
			grants = append(grants, Grant{Path: sp, Write: true})
		}
	}
	return grants, nil
}

// venvWritable refuses a venv that the sandbox could write although
// AllowPipInstall is off: at the permissive level (which writes nearly
// everywhere), under or over a writable grant, or in the kept home.
func venvWritable(h Host, s Settings, venvPath string) error {
	const fix = "set AllowPipInstall (--allow-pip-install)"
	if s.Permissive {
		return fmt.Errorf("python venv %q: the permissive level lets the sandbox write nearly everywhere, so the venv cannot stay read-only; %s, or use the default or strict level", venvPath, fix)
	}
	for _, g := range s.WritableGrants {
		if paths.Under(venvPath, g) || paths.Under(g, venvPath) {
			return fmt.Errorf("python venv %q: overlaps the writable grant %q, so it cannot stay read-only; %s, or grant less", venvPath, g, fix)
		}
	}
	if h.Home != "" && paths.Under(venvPath, h.Home) {
		return fmt.Errorf("python venv %q: inside the kept home %q, which the sandbox writes, so it cannot stay read-only; %s, or build it elsewhere", venvPath, h.Home, fix)
	}
	return nil
}

// IsPythonPrefix reports whether dir looks like a Python installation, a
// lib/pythonX.Y under it, so that an interpreter copied into some other
// directory (a home's bin/) does not open that directory's parent.
func IsPythonPrefix(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "lib", "python3*", "os.py"))
	return len(m) > 0
}
