package moat

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/spec"
	"github.com/moat-sandbox/moat/internal/viewcheck"
)

// prestart is the view the pre-start checks judge paths against, built
// from the sandbox's policy at its first command (internal/viewcheck).
type prestart struct {
	once sync.Once
	view viewcheck.View
}

// checkView is the sandbox's view for the pre-start checks.
func (s *Sandbox) checkView() viewcheck.View {
	s.pre.once.Do(func() {
		v := viewcheck.View{
			Read:      []string{"/etc", "/proc", "/sys", "/dev"},
			Exec:      s.backend.ExecRoots(),
			Write:     append([]string{s.workDir, "/dev/shm"}, s.privateRoots()...),
			Protected: append(append([]string(nil), s.view.Protected...), s.cfg.Deny...),
			ReadOnly:  s.cfg.ReadOnly,
			Temp:      hostview.SharedTempDirs,
		}
		v.Read = append(v.Read, s.sharedTemp...)
		if s.ipc != nil { // moat's own, first on PATH (internal/ipchost)
			v.Exec = append(v.Exec, s.ipc.ShimDir())
		}
		for _, g := range s.cfg.Grants {
			v.Read = append(v.Read, g.Path)
			v.Granted = append(v.Granted, g.Path)
			if g.Access.CanWrite() {
				v.Write = append(v.Write, g.Path)
			}
		}
		switch specLevel(s.cfg.Isolation) {
		case spec.LevelDefault:
			v.Exec = append(v.Exec, s.view.HomeRead...)
		case spec.LevelPermissive:
			// Everything stands for the backend's "/" root, which as a
			// root would show what the level still hides.
			v.Everything = true
			v.Exec = slices.DeleteFunc(v.Exec, func(p string) bool { return p == "/" })
			if s.view.HideHome != "" {
				v.Hidden, v.Shown = []string{s.view.HideHome}, s.view.HomeRead
			}
		}
		s.pre.view = v.Resolve()
	})
	v := s.pre.view
	v.TempPrivate = s.tempInside() == "/tmp"
	return v
}

// preStartCheck records, before a command starts, a refusal for each
// toolchain variable the caller chose (Config.Env, Cmd.Env) that names a
// place the sandbox cannot use as the tool needs, and for each absolute
// path on the command line that exists on the host but is hidden from the
// sandbox. It only stats (a few per path named), and costs nothing when
// no such variable is set and no argument is a path.
func (s *Sandbox) preStartCheck(env func() []string, extra, args []string) {
	chosen := map[string]bool{}
	for _, kv := range append(append([]string(nil), s.cfg.Env.Set...), extra...) {
		k, _, _ := strings.Cut(kv, "=")
		chosen[k] = true
	}
	for _, k := range s.cfg.Env.Passthrough {
		chosen[k] = true
	}
	hasPath := false
	for _, a := range args {
		hasPath = hasPath || strings.HasPrefix(a, "/")
	}
	wanted := false
	for _, d := range viewcheck.Vars {
		wanted = wanted || chosen[d.Name]
	}
	if !wanted && !hasPath {
		return
	}
	v := s.checkView()
	var findings []viewcheck.Finding
	if wanted {
		findings = v.CheckEnv(env(), func(name string) bool { return chosen[name] })
	}
	for _, f := range findings {
		if s.refusedInTemp(f) {
			continue
		}
		s.addRefusal(s.envRefusal(f))
	}
	for _, f := range v.CheckArgs(args) {
		if s.refusedInTemp(f) {
			continue
		}
		s.addRefusal(s.pathRefusal(f))
	}
}

// refusedInTemp reports a finding in a shared-temp directory that a
// variable named and New refused to show, with its reason, already
// (prestart_temp.go).
func (s *Sandbox) refusedInTemp(f viewcheck.Finding) bool {
	if f.Problem != viewcheck.PrivateTemp {
		return false
	}
	for d := range s.tempRefused {
		if paths.Under(f.Path, d) {
			return true
		}
	}
	return false
}

// Check runs, before the command starts, the checks Start runs first:
// each toolchain variable the caller set or passed (Config.Env, Cmd.Env)
// that names a place the sandbox cannot use as the tool needs, and each
// absolute path on the command line that exists on the host but is hidden
// from the sandbox, becomes a [Refusal] of kind "env" or "path", recorded
// for [Sandbox.Refusals] as well. A caller that prints refusals calls it
// before Start, so that they come before anything the command writes;
// Start then does not run them again (change nothing in between). Nil
// means nothing was found.
func (c *Cmd) Check() []Refusal {
	c.checked = true
	before := len(c.sb.Refusals())
	args := c.Args
	if len(args) == 0 {
		args = []string{c.Path}
	}
	c.sb.preStartCheck(func() []string { return c.sb.cmdEnv(c.Env) }, c.Env, append([]string{c.Path}, args[1:]...))
	if rs := c.sb.Refusals(); len(rs) > before {
		return rs[before:]
	}
	return nil
}

// noteHiddenProgram records a "path" refusal for a command name that the
// sandbox's PATH does not find but the host's does, in a directory hidden
// from the sandbox: the host user would run it, the sandbox cannot see it.
func (s *Sandbox) noteHiddenProgram(name string) {
	if name == "" || hasPathSeparator(name) {
		return
	}
	found, err := lookPath(name, os.Getenv("PATH"))
	if err != nil {
		return
	}
	v := s.checkView()
	if pr, at := v.Check(filepath.Dir(found), viewcheck.NeedExec); pr != viewcheck.OK {
		f := viewcheck.Finding{Path: at, Problem: pr, Need: viewcheck.NeedExec}
		s.addRefusal(s.allowFor(f, Refusal{
			Kind:    "path",
			Subject: name,
			Detail:  "not on the sandbox's PATH; the host's PATH finds it in " + at + ", " + pr.String(),
		}))
	}
}

// envRefusal is the refusal for a variable's finding.
func (s *Sandbox) envRefusal(f viewcheck.Finding) Refusal {
	return s.allowFor(f, Refusal{Kind: "env", Subject: f.Var, Detail: f.Path + ": " + f.Problem.String()})
}

// pathRefusal is the refusal for a command-line argument's finding.
func (s *Sandbox) pathRefusal(f viewcheck.Finding) Refusal {
	d := "hidden from the sandbox, which sees no such file"
	switch f.Problem {
	case viewcheck.Protected:
		d = "protected: hidden from the sandbox, whether or not the host has it"
	case viewcheck.PrivateTemp:
		d = "in the host's shared temp, hidden from the sandbox, which sees its own temp there"
	case viewcheck.NoExec:
		d = f.Problem.String()
	}
	return s.allowFor(f, Refusal{Kind: "path", Subject: f.Path, Detail: d})
}

// allowFor completes r with the setting (and its value) that would let
// the sandbox use f's path as needed; a protected path's detail also names
// the switch that lifts the protection as a whole.
func (s *Sandbox) allowFor(f viewcheck.Finding, r Refusal) Refusal {
	p := f.Path
	switch f.Problem {
	case viewcheck.Protected:
		if paths.UnderAny(p, s.cfg.Deny) {
			r.Detail += "; denied by the filesystem policy (Config.Deny)"
			return r
		}
		if flag, field := protectionOf(p); flag != "" {
			r.Detail += "; --" + flag + "=false (Config.Security." + field + ") lifts the protection as a whole"
		}
		r.Setting, r.Value = "grants.read", p
		return r.derived()
	case viewcheck.NoExec:
		if f.Need&viewcheck.NeedWrite != 0 {
			r.Setting, r.Value = "grants.mode", p+"=rwx"
			return r.derived()
		}
		if s.writtenPlace(p) {
			r.Setting, r.Value = "build", ""
			return r.derived()
		}
		r.Setting, r.Value = "grants.mode", p+"=rx"
		return r.derived()
	case viewcheck.ReadOnly:
		r.Setting, r.Value = "grants.write", p
		return r.derived()
	}
	switch {
	case f.Need&viewcheck.NeedWrite != 0 && f.Need&viewcheck.NeedExec != 0:
		r.Setting, r.Value = "grants.mode", p+"=rwx"
		return r.derived()
	case f.Need&viewcheck.NeedWrite != 0:
		r.Setting, r.Value = "grants.write", p
		return r.derived()
	case f.Need&viewcheck.NeedExec != 0:
		r.Setting, r.Value = "grants.mode", p+"=rx"
		return r.derived()
	}
	r.Setting, r.Value = "grants.read", p
	return r.derived()
}

// protectionOf names the switch whose list hides p, in any home: the CLI
// flag and the SecurityConfig field; empty when none of the lists names
// it (the curated scan found it: ProtectCredentials).
func protectionOf(p string) (flag, field string) {
	lists := []struct {
		flag, field string
		list        []string
	}{
		{"protect-credentials", "ProtectCredentials", credentialPaths},
		{"protect-shell-history", "ProtectShellHistory", shellHistoryPaths},
		{"protect-package-credentials", "ProtectPackageCredentials", packageCredentialPaths},
		{"protect-cloud-config", "ProtectCloudConfig", cloudPaths},
		{"protect-browser-data", "ProtectBrowserData", browserPaths},
		{"protect-keychains", "ProtectKeychains", keychainPaths},
	}
	for _, h := range hostview.AllHomes(hostview.OwnHome()) {
		if !paths.Under(p, h) {
			continue
		}
		for _, l := range lists {
			if listedUnder(p, h, [][]string{l.list}) {
				return l.flag, l.field
			}
		}
		return "protect-credentials", "ProtectCredentials"
	}
	return "", ""
}
