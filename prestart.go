package moat

import (
	"os"
	"slices"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/lookpath"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/spec"
	"github.com/moat-sandbox/moat/internal/viewcheck"
)

// checkView is the sandbox's view for the pre-start checks, unresolved,
// built from its policy: internal/prestart calls it once, at the first
// check (Checks.Hooks.View).
func (s *Sandbox) checkView() viewcheck.View {
	v := viewcheck.View{
		Read:      []string{"/etc", "/proc", "/sys", "/dev"},
		Exec:      s.backend.ExecRoots(),
		Write:     append([]string{s.dirs.Work, "/dev/shm"}, s.dirs.PrivateRoots(s.caches.Stores())...),
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
	return v
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
	before := len(c.sb.refused.Snapshot())
	args := c.Args
	if len(args) == 0 {
		args = []string{c.Path}
	}
	c.sb.pre.Check(func() []string { return c.sb.cmdEnv(c.Env) }, c.Env, append([]string{c.Path}, args[1:]...))
	if rs := c.sb.refused.Snapshot(); len(rs) > before {
		return rs[before:]
	}
	return nil
}

// hostProgram is the host's PATH's answer for the bare command name name:
// where it finds it; "" when it finds none or name has a separator
// (internal/prestart: Checks.NoteHiddenProgram).
func hostProgram(name string) string {
	if lookpath.HasPathSeparator(name) {
		return ""
	}
	found, err := lookpath.Find(name, os.Getenv("PATH"))
	if err != nil {
		return ""
	}
	return found
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
