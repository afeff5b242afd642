package darwin

import (
	"path/filepath"
	"slices"

	"github.com/moat-sandbox/moat/internal/gitguard"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/internal/sbpl"
	"github.com/moat-sandbox/moat/internal/spec"
)

// Host is what the profile needs to know of the host besides the policy.
// The zero value knows nothing: no helper, every path a file.
type Host struct {
	// Helper is moat's binary, resolved, which sandbox-exec runs.
	Helper string
	// Root is true when moat runs as root, for whom the kernel accepts
	// TIOCSTI on a terminal that is not its own: terminal ioctls are then
	// refused.
	Root bool
	// IsDir reports whether a path is a directory; nil treats every grant
	// as a file.
	IsDir func(string) bool
	// Entries lists a directory's entries as absolute paths, for seals;
	// nil lists none.
	Entries func(string) []string
	// ControlPaths are the git control paths (and .moat-* entries) of
	// the writable places, which stay read-only.
	ControlPaths []string
	// AllowTCCPrompts is Config's switch of that name.
	AllowTCCPrompts bool
}

// ProfileInput translates a policy and the host's facts into the
// profile's input; the terminals are added per command.
func ProfileInput(p spec.Policy, h Host) sbpl.Input {
	in := sbpl.Input{
		Level:       sbpl.Level(p.Level),
		WorkDir:     p.WorkDir,
		ExecWorkDir: p.ExecWorkDir,
		Scratch:     slices.Clone(p.Scratch),
		Home:        p.View.Home,
		HomeRead:    slices.Clone(p.View.HomeRead),
		HideHome:    p.View.HideHome,
		SharedTemp:  slices.Clone(p.View.SharedTemp),
		Protected:   slices.Clone(p.View.Protected),
		Deny:        slices.Clone(p.FS.Deny),
		Helper:      h.Helper,
		ProxyPort:   p.Network.ProxyPort,
		HostNetwork: p.HostNetwork,

		AllowGPU:        p.AllowGPU,
		AllowNPU:        p.AllowNPU,
		AllowHardware:   p.AllowHardware,
		AllowTCCPrompts: h.AllowTCCPrompts,
		TTYIoctl:        !h.Root,
	}
	for _, d := range []string{p.Private.Tmp, p.Private.VarTmp, p.Private.Home} {
		if d != "" && !slices.Contains(in.Private, d) {
			in.Private = append(in.Private, d)
		}
	}
	for _, g := range p.Grants {
		dir := h.IsDir != nil && h.IsDir(g.Path)
		in.Grants = append(in.Grants, sbpl.Grant{Path: g.Path, Write: g.Write, Exec: g.Exec, Dir: dir})
	}
	for _, s := range p.Sockets {
		in.Sockets = append(in.Sockets, s.Path)
	}
	in.ReadOnly = append(slices.Clone(p.FS.ReadOnly), h.ControlPaths...)
	slices.Sort(in.ReadOnly)
	in.ReadOnly = slices.Compact(in.ReadOnly)
	for _, d := range p.FS.Seal {
		s := sbpl.Seal{Dir: d}
		if h.Entries != nil {
			for _, e := range h.Entries(d) {
				if filepath.Dir(e) == d {
					s.Keep = append(s.Keep, e)
				}
			}
		}
		in.Seal = append(in.Seal, s)
	}
	return in
}

// systemExec are the roots whose files run below permissive, as Cmd's
// executable lookup checks them; they match package sbpl's.
var systemExec = []string{
	"/bin", "/sbin", "/usr", "/System", "/Library/Apple", "/Library/Developer",
	"/Library/Frameworks", "/Applications", "/opt", "/nix",
}

// execRoots are the paths under which the profile lets files run.
func execRoots(p *spec.Policy) []string {
	if p.Level == spec.LevelPermissive {
		return []string{"/"} // shared temp is refused by the profile
	}
	roots := slices.Clone(systemExec)
	roots = append(roots, p.View.HomeRead...)
	roots = append(roots, p.Scratch...)
	if p.ExecWorkDir {
		roots = append(roots, p.WorkDir)
	}
	for _, g := range p.Grants {
		if g.Exec && (g.Write || !underWritable(p, g.Path) && !underSharedTemp(g.Path)) {
			roots = append(roots, g.Path)
		}
	}
	return roots
}

// underWritable reports whether path lies in a writable place that is not
// executable, where the profile never lets a file run.
func underWritable(p *spec.Policy, path string) bool {
	if !p.ExecWorkDir && paths.Under(path, p.WorkDir) {
		return true
	}
	for _, d := range []string{p.Private.Tmp, p.Private.VarTmp, p.Private.Home} {
		if d != "" && paths.Under(path, d) {
			return true
		}
	}
	for _, g := range p.Grants {
		if g.Write && !g.Exec && paths.Under(path, g.Path) {
			return true
		}
	}
	return false
}

// underSharedTemp reports whether path lies in shared temp, under any of
// its names, where only rwx grants and moat's scratch run.
func underSharedTemp(path string) bool {
	for _, d := range sbpl.SharedTempDirs {
		if paths.UnderAny(path, sbpl.Aliases(d)) {
			return true
		}
	}
	return false
}

// readOnlyControl keeps, of the control paths gitguard records, those the
// sandbox must not write: every file (config, commondir, gitdir pointers,
// included config files, hooks and info entries, .moat-* fragments) and
// the hooks and info directories and the top-level control directories
// (.agents, .pi) with everything in them. A git directory itself (.git, a
// bare repository, a worktree's or a submodule's) stays writable: git
// writes its index and objects there.
func readOnlyControl(recorded []string, isDir func(string) bool) []string {
	var out []string
	for _, p := range recorded {
		base := filepath.Base(p)
		if isDir != nil && isDir(p) && base != "hooks" && base != "info" && !gitguard.IsControlName(base) {
			continue
		}
		out = append(out, p)
	}
	return out
}
