package cli

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/hostinput"
	"github.com/moat-sandbox/moat/policy"
)

// Host inputs: the files that moat reads, runs or loads on the host
// because a flag or a config names them. Each is read through
// internal/hostinput, which refuses one that a sandbox of this run or of
// an earlier one could have written, unless "moat trust FILE" pinned its
// content. Every refusal is a usage error (exit 2) naming the file, why,
// and the fix.

// Bounds of what is read: a config file, a policy document, an
// interpreter hashed for a pin.
const (
	maxConfigBytes      = 256 << 10
	maxPolicyBytes      = 1 << 20
	maxInterpreterBytes = 1 << 30
)

// hostStore returns the user's record of writable places and trusted
// files. Without a state directory moat cannot tell what an earlier run
// could write, so it fails closed.
func hostStore() (hostinput.Store, error) {
	dir, err := moat.StateDir()
	if err != nil {
		return hostinput.Store{}, usagef("cannot check host inputs against earlier runs: %s", err)
	}
	return hostinput.Store{Dir: dir}, nil
}

// readHostInput reads the file at path as subject, at most max bytes, and
// refuses it when a sandbox could have written it (current are the places
// this run's sandbox can write, when known).
func readHostInput(path, subject string, max int64, current []hostinput.Place) (*hostinput.Input, error) {
	store, err := hostStore()
	if err != nil {
		return nil, err
	}
	in, err := hostinput.Read(path, hostinput.Options{Subject: subject, Max: max, Store: store, Current: current})
	if err != nil {
		return nil, usagef("%s", err)
	}
	return in, nil
}

// loadConfigFile reads and checks the config file at path as a host
// input, and remembers it for checkConfigPlaces.
func (f *sandboxFlags) loadConfigFile(path string) (*policy.File, error) {
	in, err := readHostInput(path, "config", maxConfigBytes, nil)
	if err != nil {
		return nil, err
	}
	f.configInput = in
	return policy.Parse(path, in.Data)
}

// permissivePlace is what a sandbox at isolation permissive can write:
// every file the user can, but the protected paths that no grant names.
func permissivePlace(sec *moat.SecurityConfig, grants []string) hostinput.Place {
	pl := hostinput.Place{What: "at isolation permissive, which reaches every file you can", Path: "/", UserWritable: true}
	if sec == nil {
		return pl
	}
	for _, p := range sec.ProtectedPathsOfAllHomes() {
		if !slices.Contains(grants, p) {
			pl.Except = append(pl.Except, p)
		}
	}
	return pl
}

// resultPlaces lists the places the sandbox that res describes can write
// and whose content outlives it, with everything at isolation permissive.
func resultPlaces(res policy.Result) []hostinput.Place {
	var out []hostinput.Place
	add := func(what, p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, hostinput.Place{What: what, Path: abs})
		}
	}
	if res.Config.Isolation == moat.IsolationPermissive {
		var granted []string
		for _, g := range res.Grants {
			if abs, err := filepath.Abs(g.Path); err == nil {
				granted = append(granted, abs)
			}
		}
		out = append(out, permissivePlace(res.Config.Security, granted))
	}
	add("the working directory", res.WorkDir)
	add("the sandbox's home", res.Home)
	for _, g := range res.Grants {
		if g.Access&moat.WRITE != 0 {
			add("the writable grant", g.Path)
		}
	}
	if res.Python.AllowPip() {
		add("the venv the sandbox may install into,", res.Python.Venv)
	}
	return out
}

// configPlaces lists the places the sandbox of cfg can write.
func configPlaces(cfg moat.Config) []hostinput.Place {
	var out []hostinput.Place
	if cfg.Isolation == moat.IsolationPermissive {
		var granted []string
		for _, g := range cfg.Grants {
			granted = append(granted, g.Path)
		}
		out = append(out, permissivePlace(cfg.Security, granted))
	}
	if cfg.WorkDir != "" {
		out = append(out, hostinput.Place{What: "the working directory", Path: cfg.WorkDir})
	}
	if cfg.Home != "" {
		out = append(out, hostinput.Place{What: "the sandbox's home", Path: cfg.Home})
	}
	for _, g := range cfg.Grants {
		if g.Access&moat.WRITE != 0 {
			out = append(out, hostinput.Place{What: "the writable grant", Path: g.Path})
		}
	}
	return out
}

// checkHostInputs refuses, once the settings are merged and before
// anything is created, a config file in a place the run's sandbox can
// write, and an interpreter or --find-links directory that a sandbox of
// this run or an earlier one could have written.
func (f *sandboxFlags) checkHostInputs(res policy.Result) error {
	places := resultPlaces(res)
	if err := f.configInput.CheckCurrent(places); err != nil {
		return usagef("%s", err)
	}
	return checkPythonInputs(res.Python, places)
}

// checkPythonInputs refuses an interpreter path or a --find-links
// directory of p that a sandbox could have written: moat runs the one and
// installs from the other on the host.
func checkPythonInputs(p policy.Python, places []hostinput.Place) error {
	if !strings.Contains(p.Interpreter, "/") && len(p.FindLinks) == 0 {
		return nil
	}
	store, err := hostStore()
	if err != nil {
		return err
	}
	o := hostinput.Options{Store: store, Current: places}
	if strings.Contains(p.Interpreter, "/") {
		o.Subject, o.Max = "python interpreter", maxInterpreterBytes
		if _, err := hostinput.Check(p.Interpreter, o); err != nil {
			return usagef("%s", err)
		}
	}
	o.Subject = "--find-links directory"
	for _, l := range p.FindLinks {
		if strings.Contains(l, "://") {
			continue
		}
		if err := hostinput.CheckDir(l, o); err != nil {
			return usagef("%s", err)
		}
	}
	return nil
}

// readPolicyFile reads the policy document at path as a host input.
func readPolicyFile(path string) (*hostinput.Input, error) {
	return readHostInput(path, "policy document", maxPolicyBytes, nil)
}
