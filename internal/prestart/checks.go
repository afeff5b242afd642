// Package prestart holds the checks a sandbox runs before a command
// starts: each toolchain variable the caller chose that names a place the
// sandbox cannot use as the tool needs, each absolute path on the command
// line that the sandbox cannot see, a command name only the host's PATH
// finds, and the shared-temp directories variables name (temp.go). Each
// finding becomes a refusal of kind "env" or "path" that names the setting
// that would allow it. The view they judge against is internal/viewcheck's.
// It depends on nothing of the module but internal/hostview,
// internal/paths, internal/refusal and internal/viewcheck.
package prestart

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/refusal"
	"github.com/moat-sandbox/moat/internal/viewcheck"
)

// Checks is one sandbox's pre-start checks: what they are given, the
// view they build at the first command, and the shared-temp directories
// already refused. The zero value checks no variables, finds nothing on
// the host and records nothing; its view is empty.
type Checks struct {
	// Set is Config.Env.Set: the variables the caller set, NAME=value.
	Set []string
	// Passthrough is Config.Env.Passthrough: the variables passed as the
	// host sets them.
	Passthrough []string
	// Deny is Config.Deny, the filesystem policy's denied paths.
	Deny []string
	// Hooks are what the checks ask the sandbox.
	Hooks Hooks

	once sync.Once
	view viewcheck.View
	// tempRefused are the shared-temp directories variables named that
	// were not shown (temp.go), already refused.
	tempRefused map[string]bool
}

// Hooks are what the pre-start checks ask the sandbox. A nil hook answers
// nothing: an empty view, no writable place, no protection, no program.
type Hooks struct {
	// View builds the sandbox's view, unresolved, from its policy; called
	// once, at the first check.
	View func() viewcheck.View
	// TempInside is the sandbox's temp directory as it sees it.
	TempInside func() string
	// Written reports whether a path lies where the sandbox writes.
	Written func(path string) bool
	// Protection names the switch whose list hides a path: the CLI flag
	// and the SecurityConfig field; empty when none does.
	Protection func(path string) (flag, field string)
	// HostProgram is the host's PATH's answer for a bare command name;
	// "" when it finds none, or name is not bare.
	HostProgram func(name string) string
	// Refused records the refusals.
	Refused *refusal.List
}

// checkView is the sandbox's view for the pre-start checks.
func (c *Checks) checkView() viewcheck.View {
	c.once.Do(func() {
		if c.Hooks.View != nil {
			c.view = c.Hooks.View().Resolve()
		}
	})
	v := c.view
	v.TempPrivate = c.Hooks.TempInside != nil && c.Hooks.TempInside() == "/tmp"
	return v
}

// add records r.
func (c *Checks) add(r refusal.Refusal) {
	if c.Hooks.Refused != nil {
		c.Hooks.Refused.Add(r)
	}
}

// Check records, before a command starts, a refusal for each toolchain
// variable the caller chose (Set, Passthrough, extra: Cmd.Env) that names
// a place the sandbox cannot use as the tool needs, env being the
// command's environment, and for each absolute path in args that exists
// on the host but is hidden from the sandbox. It only stats (a few per
// path named), and costs nothing when no such variable is set and no
// argument is a path.
func (c *Checks) Check(env func() []string, extra, args []string) {
	chosen := map[string]bool{}
	for _, kv := range append(append([]string(nil), c.Set...), extra...) {
		k, _, _ := strings.Cut(kv, "=")
		chosen[k] = true
	}
	for _, k := range c.Passthrough {
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
	v := c.checkView()
	var findings []viewcheck.Finding
	if wanted {
		findings = v.CheckEnv(env(), func(name string) bool { return chosen[name] })
	}
	for _, f := range findings {
		if c.refusedInTemp(f) {
			continue
		}
		c.add(c.envRefusal(f))
	}
	for _, f := range v.CheckArgs(args) {
		if c.refusedInTemp(f) {
			continue
		}
		c.add(c.pathRefusal(f))
	}
}

// refusedInTemp reports a finding in a shared-temp directory that a
// variable named and SharedTempDirs refused to show, with its reason,
// already.
func (c *Checks) refusedInTemp(f viewcheck.Finding) bool {
	if f.Problem != viewcheck.PrivateTemp {
		return false
	}
	for d := range c.tempRefused {
		if paths.Under(f.Path, d) {
			return true
		}
	}
	return false
}

// NoteHiddenProgram records a "path" refusal for a command name that the
// sandbox's PATH does not find but the host's does, in a directory hidden
// from the sandbox: the host user would run it, the sandbox cannot see it.
func (c *Checks) NoteHiddenProgram(name string) {
	if name == "" || c.Hooks.HostProgram == nil {
		return
	}
	found := c.Hooks.HostProgram(name)
	if found == "" {
		return
	}
	v := c.checkView()
	if pr, at := v.Check(filepath.Dir(found), viewcheck.NeedExec); pr != viewcheck.OK {
		f := viewcheck.Finding{Path: at, Problem: pr, Need: viewcheck.NeedExec}
		c.add(c.allowFor(f, refusal.Refusal{
			Kind:    "path",
			Subject: name,
			Detail:  "not on the sandbox's PATH; the host's PATH finds it in " + at + ", " + pr.String(),
		}))
	}
}

// envRefusal is the refusal for a variable's finding.
func (c *Checks) envRefusal(f viewcheck.Finding) refusal.Refusal {
	return c.allowFor(f, refusal.Refusal{Kind: "env", Subject: f.Var, Detail: f.Path + ": " + f.Problem.String()})
}

// pathRefusal is the refusal for a command-line argument's finding.
func (c *Checks) pathRefusal(f viewcheck.Finding) refusal.Refusal {
	d := "hidden from the sandbox, which sees no such file"
	switch f.Problem {
	case viewcheck.Protected:
		d = "protected: hidden from the sandbox, whether or not the host has it"
	case viewcheck.PrivateTemp:
		d = "in the host's shared temp, hidden from the sandbox, which sees its own temp there"
	case viewcheck.NoExec:
		d = f.Problem.String()
	}
	return c.allowFor(f, refusal.Refusal{Kind: "path", Subject: f.Path, Detail: d})
}

// allowFor completes r with the setting (and its value) that would let
// the sandbox use f's path as needed; a protected path's detail also names
// the switch that lifts the protection as a whole.
func (c *Checks) allowFor(f viewcheck.Finding, r refusal.Refusal) refusal.Refusal {
	p := f.Path
	switch f.Problem {
	case viewcheck.Protected:
		if paths.UnderAny(p, c.Deny) {
			r.Detail += "; denied by the filesystem policy (Config.Deny)"
			return r
		}
		if c.Hooks.Protection != nil {
			if flag, field := c.Hooks.Protection(p); flag != "" {
				r.Detail += "; --" + flag + "=false (Config.Security." + field + ") lifts the protection as a whole"
			}
		}
		r.Setting, r.Value = "grants.read", p
		return refusal.Derived(r)
	case viewcheck.NoExec:
		if f.Need&viewcheck.NeedWrite != 0 {
			r.Setting, r.Value = "grants.mode", p+"=rwx"
			return refusal.Derived(r)
		}
		if c.Hooks.Written != nil && c.Hooks.Written(p) {
			r.Setting, r.Value = "build", ""
			return refusal.Derived(r)
		}
		r.Setting, r.Value = "grants.mode", p+"=rx"
		return refusal.Derived(r)
	case viewcheck.ReadOnly:
		r.Setting, r.Value = "grants.write", p
		return refusal.Derived(r)
	}
	switch {
	case f.Need&viewcheck.NeedWrite != 0 && f.Need&viewcheck.NeedExec != 0:
		r.Setting, r.Value = "grants.mode", p+"=rwx"
		return refusal.Derived(r)
	case f.Need&viewcheck.NeedWrite != 0:
		r.Setting, r.Value = "grants.write", p
		return refusal.Derived(r)
	case f.Need&viewcheck.NeedExec != 0:
		r.Setting, r.Value = "grants.mode", p+"=rx"
		return refusal.Derived(r)
	}
	r.Setting, r.Value = "grants.read", p
	return refusal.Derived(r)
}
