package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// A user who is not root can still have a cgroup v2 subtree of their own:
// systemd delegates user@UID.service (below user.slice/user-UID.slice) to
// the user's service manager, and `systemd-run --user --scope -p
// Delegate=yes` delegates a scope. A delegated subtree is a directory
// whose cgroup.procs, cgroup.subtree_control and directory itself belong
// to the user. The kernel lets a process move another into a group only
// with write access to the cgroup.procs of their common ancestor, and
// enables a domain controller such as memory for children only in a group
// that holds no process itself. So the group is made at the top of the
// delegated subtree that holds this process, the delegation root, which
// has no processes of its own (systemd keeps its own in init.scope).

// delegation is the delegated subtree a group can be made in.
type delegation struct {
	dir string // the delegation root, absolute
	rel string // its path as /proc/self/cgroup lists it
}

// findDelegation walks from this process's own v2 group (below mount at
// rel) up to the highest ancestor that uid owns, and returns it if the
// controllers in need are available there. It only reads the file system.
func findDelegation(mount, rel string, uid int, need []string) (delegation, error) {
	rel = path.Clean("/" + rel)
	var best delegation
	for r := rel; ; r = path.Dir(r) {
		dir := path.Join(mount, r)
		if !ownedBy(uid, dir, path.Join(dir, "cgroup.procs"), path.Join(dir, "cgroup.subtree_control")) {
			break
		}
		best = delegation{dir: dir, rel: r}
		if r == "/" {
			break
		}
	}
	if best.dir == "" {
		return best, unavailable(path.Join(mount, rel), fmt.Errorf("not in a cgroup subtree delegated to uid %d (start moat under systemd-run --user --scope -p Delegate=yes, or from the user's service manager)", uid))
	}
	have, err := readList(path.Join(best.dir, "cgroup.controllers"))
	if err != nil {
		return best, unavailable(best.dir, err)
	}
	for _, c := range need {
		if !slices.Contains(have, c) {
			return best, unavailable(best.dir, fmt.Errorf("the delegated subtree has no %s controller (it has %s)", c, orNone(have)))
		}
	}
	return best, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}

// ownedBy reports whether every path exists and belongs to uid.
func ownedBy(uid int, paths ...string) bool {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != uid {
			return false
		}
	}
	return true
}

// delegated re-roots the layout's v2 hierarchy at the delegation root that
// holds this process, for a user who is not root. Controllers that only a
// v1 hierarchy has cannot be delegated this way, so with such a need the
// layout is left as it is (and New fails on the v1 directories).
func (l layout) delegated(uid int, need []string) (layout, string, error) {
	if l.v2 == nil {
		return l, "", unavailable("cgroup2", errors.New("no cgroup v2 hierarchy, which delegation to a user needs"))
	}
	for _, c := range need {
		if l.where(c) != "v2" {
			return l, "", unavailable(c, errors.New("controller not on the cgroup v2 hierarchy, which delegation to a user needs"))
		}
	}
	d, err := findDelegation(l.v2.mount, l.v2.rel, uid, need)
	if err != nil {
		return l, "", err
	}
	v2 := *l.v2
	v2.parent, v2.rel = d.dir, d.rel
	l.v2 = &v2
	l.v1 = nil // not ours to write
	return l, d.dir, nil
}
