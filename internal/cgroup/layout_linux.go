package cgroup

import (
	"errors"
	"os"
	"path"
	"slices"
	"strings"
)

// hierarchy is one mounted cgroup hierarchy as seen by this process.
type hierarchy struct {
	mount       string   // mount point
	parent      string   // directory of this process's own cgroup in it
	rel         string   // this process's cgroup path, as /proc/self/cgroup lists it
	controllers []string // v1 controllers on this mount; nil for v2
}

// layout is the cgroup layout of the host as seen by this process.
type layout struct {
	v2            *hierarchy            // nil if no usable v2 hierarchy
	v2Controllers []string              // controllers bound to v2 (root cgroup.controllers)
	v1            map[string]*hierarchy // controller -> hierarchy (shared when co-mounted)
}

// buildLayout combines /proc/self/mountinfo and /proc/self/cgroup text. It
// does not touch the filesystem, so v2Controllers is left empty.
func buildLayout(mountinfo, self string) layout {
	pc := parseProcCgroup(self)
	l := layout{v1: map[string]*hierarchy{}}
	for _, e := range parseMountinfo(mountinfo) {
		switch e.fsType {
		case "cgroup2":
			if !pc.hasV2 {
				continue
			}
			// Prefer the conventional locations when several are mounted.
			if l.v2 != nil && !(isStdMount(e.mountPoint) && !isStdMount(l.v2.mount)) {
				continue
			}
			if dir, ok := dirIn(e, pc.v2); ok {
				l.v2 = &hierarchy{mount: e.mountPoint, parent: dir, rel: path.Clean(pc.v2)}
			}
		case "cgroup":
			ctrls := v1Controllers(e)
			if len(ctrls) == 0 {
				continue
			}
			p, ok := pc.v1[ctrls[0]]
			if !ok {
				continue
			}
			dir, ok := dirIn(e, p)
			if !ok {
				continue
			}
			h := &hierarchy{mount: e.mountPoint, parent: dir, rel: path.Clean(p), controllers: ctrls}
			for _, c := range ctrls {
				if _, dup := l.v1[c]; !dup {
					l.v1[c] = h
				}
			}
		}
	}
	return l
}

func isStdMount(p string) bool {
	return p == "/sys/fs/cgroup" || p == "/sys/fs/cgroup/unified"
}

// discover reads this process's cgroup layout from /proc. The error wraps
// ErrUnavailable.
func discover() (layout, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return layout{}, unavailable("/proc/self/mountinfo", err)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return layout{}, unavailable("/proc/self/cgroup", err)
	}
	l := buildLayout(string(mi), string(self))
	if l.v2 == nil && len(l.v1) == 0 {
		return l, unavailable("/proc/self/mountinfo", errors.New("no cgroup filesystem mounted for this process"))
	}
	if l.v2 != nil {
		l.v2Controllers, _ = readList(path.Join(l.v2.mount, "cgroup.controllers"))
	}
	return l, nil
}

// where names the hierarchy that owns controller c: "v2", "v1" or "".
// A controller bound to v2 is never also mounted in v1.
func (l layout) where(c string) string {
	if l.v2 != nil && slices.Contains(l.v2Controllers, c) {
		return "v2"
	}
	if l.v1[c] != nil {
		return "v1"
	}
	return ""
}

// v1Mounts maps each v1 controller to its mount point.
func (l layout) v1Mounts() map[string]string {
	m := make(map[string]string, len(l.v1))
	for c, h := range l.v1 {
		m[c] = h.mount
	}
	return m
}

// readList reads a space-separated cgroupfs list file such as
// cgroup.controllers.
func readList(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}
