package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// The filesystem policy beyond the working directory and grants
// (spec.FS): Deny, ReadOnly, Seal, virtual files and a hidden /proc.
//
//   - Deny: with a mount namespace, an existing denied path is masked,
//     so that its contents and a directory's names do not show: a
//     directory behind an empty read-only tmpfs without permissions (ls
//     fails with EACCES), a file behind an empty read-only file without
//     permissions. Inside a writable place the mask alone enforces it: the
//     mask is a mount point, which cannot be removed, renamed, replaced or
//     chmodded (EBUSY, EROFS), the directories on the way from the place
//     are pinned (bound onto themselves) so that renaming them fails, and
//     the place keeps every other right. A denied path missing at New in a
//     writable place gets a marked placeholder directory on the host
//     (and the missing directories on the way), masked the same way and
//     removed at Close (host_denyguard_linux.go).
//     Elsewhere (read-only places, paths that are neither files nor
//     directories) and
//     without a mount namespace, Landlock rules are carved around the
//     denied path (Keep 0), which beats the level and the rules of
//     parents, while a grant at or inside the path is a rule of its own
//     and wins. Entries that do not exist when the sandbox is built get no
//     rule, so a missing denied path can be created neither by the sandbox
//     (the directory holding it keeps only listing) nor usefully by the
//     host (it stays unreadable).
//   - ReadOnly: with a mount namespace an existing path is bound
//     read-only over its writable place and the directories on the way
//     are pinned, as the git control paths are: the place keeps every
//     other right. A missing control name (.git, .agents, .pi, .moat-*,
//     .heimdall-*) at the top of a writable place gets nothing: Close
//     moves aside whatever the run created there. Without a mount
//     namespace, and for any other missing path, the rules are carved
//     around it keeping only reading (and execution where the place had
//     it).
//   - Seal: the rules are carved so that the directory keeps only
//     listing and each entry present at start gets the directory's
//     rights; a new entry gets none.
//
// Carving costs the directories on the way to a carved path their right
// to create and remove entries: Landlock has no rule that takes rights
// back below a directory. Without a mount namespace a Deny or ReadOnly
// path in the working directory thus makes the working directory's top
// level fixed (its existing files and directories stay writable): that is
// the fail-closed price of Landlock alone, and the report says so. With
// empty fields none of this runs.

// denyMask is one denied path hidden in the mount namespace. Traverse
// gives a directory mask search permission (but no listing), for a bind
// that lies inside it (a grant of a path inside the denied one).
type denyMask struct {
	Path     string `json:"path"`
	Traverse bool   `json:"traverse,omitempty"`
}

// virtualFile is one read-only file shown at Path in the mount namespace.
type virtualFile struct {
	Path    string `json:"path"`
	Content []byte `json:"content"`
}

// applyFS adds the filesystem policy to s. It does nothing for an empty
// one, so that start-up costs nothing more.
func (e *Engine) applyFS(s *helperSpec) {
	p := &e.policy
	f := &p.FS
	if p.HostNetwork && s.NS.Mount {
		// The host's resolver configuration, where it is a link into
		// /run (systemd-resolved), which the sandbox sees empty.
		if t, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && t != "/etc/resolv.conf" && isUnder(t, "/run") {
			s.ReadOnly = append(s.ReadOnly, t)
		}
	}
	if f.Empty() {
		return
	}
	granted := func(path string) bool {
		if path == p.WorkDir || path == p.Private.Tmp || path == p.Private.VarTmp || path == p.Private.Home {
			return true
		}
		for _, g := range p.Grants {
			if g.Path == path {
				return true
			}
		}
		return false
	}
	all := handledFS(s.LandlockABI)
	denied := map[string]bool{}
	for _, d := range f.Deny {
		if granted(d) || denied[d] {
			continue
		}
		denied[d] = true
		if s.NS.Mount {
			s.DenyMasks = append(s.DenyMasks, denyMask{Path: d, Traverse: holdsBind(s, d)})
			// In a writable place the mask alone holds it (a
			// placeholder stands in for a missing one), so that the
			// place keeps its right to create entries.
			if place := writableBindAbove(s, d); place != "" && maskable(d) {
				pinWay(s, d, place)
				continue
			}
		}
		s.Carve = append(s.Carve, carveRule{Path: d})
	}
	readOnly := map[string]bool{}
	for _, r := range f.ReadOnly {
		if granted(r) || denied[r] || readOnly[r] {
			continue
		}
		readOnly[r] = true
		if place := writableBindAbove(s, r); s.NS.Mount && place != "" && existsNoFollow(r) {
			s.ControlRO = append(slices.Clip(s.ControlRO), r)
			for dir := filepath.Dir(r); isStrictlyUnder(dir, place); dir = filepath.Dir(dir) {
				if !slices.Contains(s.ControlPins, dir) {
					s.ControlPins = append(slices.Clip(s.ControlPins), dir)
				}
			}
			continue
		}
		if _, err := os.Lstat(r); os.IsNotExist(err) && createdByRunCheck(p, r) {
			continue // Close moves aside what the run creates there
		}
		s.Carve = append(s.Carve, carveRule{Path: r, Keep: fsReadExec})
	}
	for _, d := range f.Seal {
		switch {
		case denied[d]:
		case readOnly[d]:
			s.Carve = append(s.Carve, carveRule{Path: d, Keep: fsReadExec, Seal: true})
		default:
			s.Carve = append(s.Carve, carveRule{Path: d, Keep: all, Seal: true})
		}
	}
	if s.NS.Mount {
		for _, v := range f.Virtual {
			s.Virtual = append(s.Virtual, virtualFile{Path: v.Path, Content: v.Content})
		}
		s.HideProc = f.HideProc
	}
}

// holdsBind reports whether any path the sandbox is given lies strictly
// inside dir, so that a mask there must let it be reached.
func holdsBind(s *helperSpec, dir string) bool {
	lists := [][]string{{s.WorkDir}, s.ReadExec, s.ReadOnly, s.ReadWrite, s.WriteExec, s.DevFiles, s.TempRead, s.ListOnly, s.Grants}
	for _, l := range lists {
		for _, p := range l {
			if isStrictlyUnder(p, dir) {
				return true
			}
		}
	}
	return false
}

// writableBindAbove returns the writable place that holds p in the mount
// namespace (the working directory, a writable grant or private
// directory, a permissive top-level directory), the nearest one, or "".
func writableBindAbove(s *helperSpec, p string) string {
	best := ""
	consider := func(w string) {
		if isStrictlyUnder(p, w) && len(w) > len(best) {
			best = w
		}
	}
	consider(s.WorkDir)
	for _, w := range s.ReadWrite {
		consider(w)
	}
	for _, w := range s.WriteExec {
		consider(w)
	}
	if s.Permissive {
		if first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/"); first != "" && !permissiveSkip[first] {
			consider("/" + first)
		}
	}
	return best
}

func existsNoFollow(p string) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK
}

// fsMissing lists what the filesystem policy needs and this
// configuration lacks.
func (e *Engine) fsMissing() (missing, gaps []string) {
	f := &e.policy.FS
	if f.Empty() {
		return nil, nil
	}
	if len(f.Deny)+len(f.ReadOnly)+len(f.Seal) > 0 && e.host.LandlockABI < 1 {
		missing = append(missing, "filesystem policy: deny, read-only and sealed paths need Landlock")
	}
	for _, d := range f.Deny {
		// Landlock rules hold on inodes: another name of a denied file,
		// in a place the sandbox may read, opens it.
		var st unix.Stat_t
		if unix.Lstat(d, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
			gaps = append(gaps, fmt.Sprintf("denied file %s has %d hard links: one outside the denied paths, where the sandbox may read, shows its contents", d, st.Nlink))
		}
	}
	if !e.ns.Mount {
		if len(f.Virtual) > 0 {
			missing = append(missing, "virtual files: need a mount namespace (they are never written to the host)")
		}
		if f.HideProc {
			missing = append(missing, "hide-proc: needs a mount namespace")
		}
		if len(f.Deny) > 0 {
			gaps = append(gaps, "no mount namespace: the names in a denied directory can be listed (their contents stay unreadable)")
		}
		if len(f.Deny)+len(f.ReadOnly) > 0 {
			gaps = append(gaps, "no mount namespace: Landlock alone enforces denied and read-only paths, so no entry can be created or removed directly in a writable directory on the way to one")
		}
	}
	return missing, gaps
}

// fsLayer describes the filesystem policy, or reports false when there is
// none.
func (e *Engine) fsLayer() (layerDetail string, active, ok bool) {
	f := &e.policy.FS
	if f.Empty() {
		return "", false, false
	}
	var parts []string
	if n := len(f.Deny); n > 0 {
		how := "Landlock, EACCES; ones created later stay unreadable; no mount namespace, so the writable directories on the way are frozen"
		if e.ns.Mount {
			how = "masks and Landlock, EACCES; in writable places the mask alone, and a marked placeholder guards a missing one, removed at Close"
		}
		parts = append(parts, fmt.Sprintf("%d denied paths (%s)", n, how))
	}
	if n := len(f.ReadOnly); n > 0 {
		how := "Landlock"
		if e.ns.Mount {
			how = "read-only binds; Landlock for missing ones"
		}
		parts = append(parts, fmt.Sprintf("%d read-only paths (%s)", n, how))
	}
	if n := len(f.Seal); n > 0 {
		parts = append(parts, fmt.Sprintf("%d sealed directories (new entries get no access)", n))
	}
	if n := len(f.Virtual); n > 0 && e.ns.Mount {
		parts = append(parts, fmt.Sprintf("%d virtual files (mount namespace only)", n))
	}
	if f.HideProc && e.ns.Mount {
		parts = append(parts, "no /proc")
	}
	m, _ := e.fsMissing()
	return strings.Join(parts, "; "), len(m) == 0, true
}

// virtualPaths are the paths of s's virtual files, which get read rules.
func virtualPaths(s *helperSpec) []string {
	if len(s.Virtual) == 0 {
		return nil
	}
	out := make([]string, len(s.Virtual))
	for i, v := range s.Virtual {
		out[i] = v.Path
	}
	return out
}

// checkVirtual refuses the virtual files New cannot show without
// namespaces, whatever the enforcement mode: their contents would have to
// be written to the host.
func (e *Engine) checkVirtual() error {
	if len(e.policy.FS.Virtual) > 0 && !e.host.UserNS {
		return fmt.Errorf("virtual files: need a mount namespace, and this host refuses user namespaces (%s); they are never written to the host", e.host.UserNSReason)
	}
	return nil
}

// BuildNow builds the sandbox at once, rather than at its first command,
// when the filesystem policy depends on the moment it is built: Seal,
// Deny and ReadOnly give rules to the entries that exist then, and a
// virtual file that cannot be shown should fail New. With an empty policy
// it does nothing.
func (e *Engine) BuildNow() error {
	if f := &e.policy.FS; len(f.Deny)+len(f.ReadOnly)+len(f.Seal)+len(f.Virtual) == 0 {
		return nil
	}
	e.zmu.Lock()
	defer e.zmu.Unlock()
	_, err := e.zygoteLocked()
	if err != nil && e.Fallback(err) {
		_, err = e.zygoteLocked()
	}
	return err
}
