package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Group is one sandbox's cgroup, possibly spread over a v2 directory and
// several v1 controller directories. Make one with New; the zero value is
// not usable (its methods fail or do nothing). Methods are safe for
// concurrent use.
type Group struct {
	mu       sync.Mutex
	name     string
	dirs     []member          // v2 group first, if any
	ctrl     map[string]member // controller -> the directory enforcing it
	v2fd     int               // -1 if no v2 group or after Remove
	killHow  string            // see Enforced
	enforced map[string]string
	removed  bool
}

// member is one directory of a Group.
type member struct {
	dir         string   // absolute path of the group directory
	rel         string   // the group's path as /proc/<pid>/cgroup lists it
	v2          bool     // in the v2 hierarchy
	controllers []string // v1 controllers of the hierarchy; nil for v2
}

// New creates the group named name (the caller passes a unique name such
// as "moat-<hex>") below this process's own cgroup in every hierarchy it
// needs, and applies lim.
//
// On a hybrid host the v2 group is made even when no v2 controller is
// used: it tracks the tree, can be entered atomically through V2FD and
// killed with cgroup.kill. Limits whose controllers live in v1 get a
// directory in that controller's v1 hierarchy, and Add must be used to put
// processes there.
//
// The error wraps ErrUnavailable if this process cannot create cgroups
// (not root, hierarchy not delegated, no cgroup filesystem). It is a plain
// error if name or lim is invalid, the group already exists, or a
// requested limit cannot be applied; the caller decides whether to go on
// without limits. Directories already made are removed on any error.
func New(name string, lim Limits) (*Group, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := lim.check(); err != nil {
		return nil, err
	}
	l, err := discover()
	if err != nil {
		return nil, err
	}
	if uid := os.Geteuid(); uid != 0 {
		l, dir, err := l.delegated(uid, lim.controllers())
		if err != nil {
			return nil, err
		}
		g, err := newIn(l, name, lim)
		if err == nil {
			g.enforced["delegated"] = dir
		}
		return g, err
	}
	return newIn(l, name, lim)
}

// newIn is New on an already discovered (or, in tests, altered) layout.
func newIn(l layout, name string, lim Limits) (*Group, error) {
	g, err := create(l, name, lim.controllers(), true)
	if err != nil {
		return nil, err
	}
	if err := g.apply(lim); err != nil {
		_ = g.removeDirs()
		return nil, err
	}
	return g, nil
}

// checkName accepts a single path element made of letters, digits, '-',
// '_' and '.', not starting with '.', so it can neither escape the parent
// group nor collide with an interface file such as cgroup.procs.
func checkName(name string) error {
	if name == "" || len(name) > 200 || name[0] == '.' {
		return fmt.Errorf("cgroup: name %q: must be 1-200 characters, not starting with '.'", name)
	}
	for _, c := range name {
		ok := c == '-' || c == '_' || c == '.' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
		if !ok {
			return fmt.Errorf("cgroup: name %q: only letters, digits, '-', '_' and '.' are allowed", name)
		}
	}
	return nil
}

func (lim Limits) check() error {
	switch {
	case lim.MemoryBytes < 0:
		return fmt.Errorf("cgroup: limits: MemoryBytes is negative (%d)", lim.MemoryBytes)
	case lim.MaxProcs < 0:
		return fmt.Errorf("cgroup: limits: MaxProcs is negative (%d)", lim.MaxProcs)
	case lim.CPUQuotaPercent < 0:
		return fmt.Errorf("cgroup: limits: CPUQuotaPercent is negative (%d)", lim.CPUQuotaPercent)
	}
	return nil
}

// controllers lists the controllers lim needs.
func (lim Limits) controllers() []string {
	var c []string
	if lim.MemoryBytes > 0 {
		c = append(c, "memory")
	}
	if lim.MaxProcs > 0 {
		c = append(c, "pids")
	}
	if lim.CPUQuotaPercent > 0 {
		c = append(c, "cpu")
	}
	return c
}

// create makes the group's directories for the controllers in need (plus
// tracking and kill helpers) without writing any limit. With enable false
// it does not touch the parent's v2 cgroup.subtree_control (used by Probe,
// which must leave nothing behind).
func create(l layout, name string, need []string, enable bool) (g *Group, err error) {
	g = &Group{name: name, v2fd: -1, ctrl: map[string]member{}, enforced: map[string]string{}}
	defer func() {
		if err != nil {
			_ = g.removeDirs()
			g = nil
		}
	}()

	plan := map[string]string{} // controller -> "v1" / "v2"
	var onV2 []string
	for _, c := range need {
		w := l.where(c)
		if w == "" {
			return g, fmt.Errorf("cgroup: %s: controller not available on this host", c)
		}
		plan[c] = w
		if w == "v2" {
			onV2 = append(onV2, c)
		}
	}

	var v2Err error
	if l.v2 != nil {
		dir := path.Join(l.v2.parent, name)
		switch err := os.Mkdir(dir, 0o755); {
		case err == nil:
			m := member{dir: dir, rel: path.Join(l.v2.rel, name), v2: true}
			g.dirs = append(g.dirs, m)
			fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return g, fmt.Errorf("cgroup: %s: cannot open: %w", dir, err)
			}
			g.v2fd = fd
			if len(onV2) > 0 && enable {
				if err := enableControllers(l.v2.parent, dir, onV2); err != nil {
					return g, err
				}
			}
			for _, c := range onV2 {
				g.ctrl[c] = m
			}
			switch {
			case exists(path.Join(dir, "cgroup.kill")):
				g.killHow = "v2"
			case exists(path.Join(dir, "cgroup.freeze")):
				g.killHow = "v2-freeze"
			}
		case errors.Is(err, fs.ErrExist):
			return g, fmt.Errorf("cgroup: %s: already exists", dir)
		case len(onV2) > 0:
			return g, unavailable(dir, err)
		default:
			v2Err = unavailable(dir, err) // optional here: track with v1 instead
		}
	}

	// v1 hierarchies to use, each once even when controllers share one.
	type want struct {
		h        *hierarchy
		required bool
	}
	var wants []want
	add := func(h *hierarchy, required bool) {
		for i := range wants {
			if wants[i].h == h {
				wants[i].required = wants[i].required || required
				return
			}
		}
		wants = append(wants, want{h, required})
	}
	for _, c := range need {
		if plan[c] == "v1" {
			add(l.v1[c], true)
		}
	}
	if g.killHow == "" && l.v1["freezer"] != nil {
		add(l.v1["freezer"], false)
	}
	// Without a v2 group some v1 directory must hold the tree; the
	// freezer is preferred, which upgrades an optional freezer want.
	if len(g.dirs) == 0 && !slices.ContainsFunc(wants, func(w want) bool { return w.required }) {
		if h := trackingHierarchy(l); h != nil {
			add(h, true)
		}
	}
	for _, w := range wants {
		dir := path.Join(w.h.parent, name)
		switch err := os.Mkdir(dir, 0o755); {
		case err == nil:
			m := member{dir: dir, rel: path.Join(w.h.rel, name), controllers: w.h.controllers}
			g.dirs = append(g.dirs, m)
			for _, c := range w.h.controllers {
				if plan[c] == "v1" {
					g.ctrl[c] = m
				}
			}
			if g.killHow == "" && slices.Contains(w.h.controllers, "freezer") {
				g.killHow = "v1-freezer"
			}
		case errors.Is(err, fs.ErrExist):
			return g, fmt.Errorf("cgroup: %s: already exists", dir)
		case w.required:
			return g, unavailable(dir, err)
		}
	}
	if len(g.dirs) == 0 {
		if v2Err != nil {
			return g, v2Err
		}
		return g, unavailable(name, errors.New("no cgroup hierarchy to create the group in"))
	}
	if g.killHow == "" {
		g.killHow = "signal"
	}
	g.enforced["kill"] = g.killHow
	return g, nil
}

// trackingHierarchy picks a v1 hierarchy to hold the group when nothing
// else does, preferring ones whose controllers are cheap to join.
func trackingHierarchy(l layout) *hierarchy {
	for _, c := range []string{"freezer", "pids", "memory", "cpu"} {
		if h := l.v1[c]; h != nil {
			return h
		}
	}
	for _, c := range slices.Sorted(maps.Keys(l.v1)) {
		return l.v1[c]
	}
	return nil
}

// enableControllers makes sure ctrls are enabled for the new v2 group dir
// by writing "+<c>" to its parent's cgroup.subtree_control where needed.
func enableControllers(parent, dir string, ctrls []string) error {
	have, _ := readList(path.Join(dir, "cgroup.controllers"))
	for _, c := range ctrls {
		if slices.Contains(have, c) {
			continue
		}
		file := path.Join(parent, "cgroup.subtree_control")
		if err := writeFile(file, "+"+c); err != nil {
			hint := ""
			if errors.Is(err, unix.EBUSY) {
				hint = " (the parent group holds processes itself; run from a leaf of a delegated subtree)"
			}
			return fmt.Errorf("cgroup: %s: cannot enable the %s controller: %w%s", file, c, cause(err), hint)
		}
	}
	return nil
}

// apply writes lim into the group's directories.
func (g *Group) apply(lim Limits) error {
	if lim.MemoryBytes > 0 {
		m := g.ctrl["memory"]
		v := strconv.FormatInt(lim.MemoryBytes, 10)
		if m.v2 {
			if err := setFile(m.dir, "memory.max", v); err != nil {
				return err
			}
			// No swap: the limit should bound what the tree can hold.
			if err := setFile(m.dir, "memory.swap.max", "0"); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		} else {
			if err := setFile(m.dir, "memory.limit_in_bytes", v); err != nil {
				return err
			}
			// memsw is memory+swap; absent without swap accounting.
			if err := setFile(m.dir, "memory.memsw.limit_in_bytes", v); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		g.enforced["memory"] = hier(m)
	}
	if lim.MaxProcs > 0 {
		m := g.ctrl["pids"]
		if err := setFile(m.dir, "pids.max", strconv.FormatInt(lim.MaxProcs, 10)); err != nil {
			return err
		}
		g.enforced["pids"] = hier(m)
	}
	if lim.CPUQuotaPercent > 0 {
		const period = 100000 // µs
		m := g.ctrl["cpu"]
		quota := strconv.FormatInt(int64(lim.CPUQuotaPercent)*period/100, 10)
		if m.v2 {
			if err := setFile(m.dir, "cpu.max", quota+" "+strconv.Itoa(period)); err != nil {
				return err
			}
		} else {
			if err := setFile(m.dir, "cpu.cfs_period_us", strconv.Itoa(period)); err != nil {
				return err
			}
			if err := setFile(m.dir, "cpu.cfs_quota_us", quota); err != nil {
				return err
			}
		}
		g.enforced["cpu"] = hier(m)
	}
	return nil
}

func hier(m member) string {
	if m.v2 {
		return "v2"
	}
	return "v1"
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Enforced reports which limits are really held and by which hierarchy, for
// a report: keys "memory", "pids", "cpu" map to "v1" or "v2" and are present
// only for limits that were requested and applied; "delegated", for a
// process that is not root, names the delegated v2 subtree the group was
// made in; "kill" says how Kill
// works: "v2" (cgroup.kill), "v2-freeze" (cgroup.freeze, then SIGKILL),
// "v1-freezer" (v1 freezer, then SIGKILL) or "signal" (SIGKILL only). A nil
// Group reports an empty map. The map is a copy.
func (g *Group) Enforced() map[string]string {
	if g == nil {
		return map[string]string{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.enforced)
}

// V2FD returns an O_RDONLY|O_DIRECTORY descriptor of the v2 group directory,
// for SysProcAttr{UseCgroupFD: true, CgroupFD: fd}, or -1 if there is no v2
// group (or after Remove). The Group owns it; Remove closes it. A child
// started this way is only in the v2 group: on hybrid and v1 hosts call Add
// too for the v1 limits.
func (g *Group) V2FD() int {
	if g == nil {
		return -1
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.v2fd
}

// Add moves process pid (all its threads) into every directory of the
// group by writing cgroup.procs: each v1 group and the v2 group if any. It
// tries every directory and reports all failures.
func (g *Group) Add(pid int) error {
	if g == nil {
		return errors.New("cgroup: group: nil")
	}
	if pid <= 0 {
		return fmt.Errorf("cgroup: pid %d: not a process", pid)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.removed {
		return fmt.Errorf("cgroup: %s: group already removed", g.name)
	}
	var errs []error
	for _, m := range g.dirs {
		file := path.Join(m.dir, "cgroup.procs")
		if err := writeFile(file, strconv.Itoa(pid)); err != nil {
			errs = append(errs, fmt.Errorf("cgroup: %s: cannot add pid %d: %w", file, pid, cause(err)))
		}
	}
	return errors.Join(errs...)
}

// Remove kills every process in the group (as Kill does), then removes
// every directory of it, retrying for about a second while the kernel
// still reports it busy, and closes the V2FD descriptor. It is idempotent
// and safe on a nil Group; after a failure it can be called again.
func (g *Group) Remove() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.removed {
		return nil
	}
	kerr := g.kill()
	if err := g.removeDirs(); err != nil {
		return errors.Join(kerr, err)
	}
	// The directories are gone, which the kernel allows only once no task
	// is left: a kill error no longer matters.
	g.removed = true
	return nil
}

// removeDirs closes the v2 descriptor and removes every directory.
func (g *Group) removeDirs() error {
	if g.v2fd >= 0 {
		_ = unix.Close(g.v2fd)
		g.v2fd = -1
	}
	var errs []error
	for _, m := range g.dirs {
		errs = append(errs, removeTree(m.dir))
	}
	return errors.Join(errs...)
}
