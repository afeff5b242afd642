package cgroup

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
)

// Probe reports what this process could use, without leaving anything
// behind: it reads /proc/self/mountinfo and /proc/self/cgroup, then
// creates a scratch group (named moat-probe-<pid>-<random>) in every
// hierarchy a memory+pids+cpu limited Group would use, and removes it. It
// writes no limits and does not change any cgroup.subtree_control.
func Probe() Info {
	var info Info
	l, err := discover()
	if l.v2 != nil {
		info.V2Mount = l.v2.mount
		info.V2Controllers = l.v2Controllers
	}
	if len(l.v1) > 0 {
		info.V1 = l.v1Mounts()
	}
	if err != nil {
		info.Reason = err.Error()
		return info
	}
	info.Memory, info.Pids, info.CPU = l.where("memory"), l.where("pids"), l.where("cpu")
	var need []string
	for _, c := range []string{"memory", "pids", "cpu"} {
		if l.where(c) != "" {
			need = append(need, c)
		}
	}
	if uid := os.Geteuid(); uid != 0 {
		// What a sandbox asks a delegated subtree for: memory and pids.
		need = slices.DeleteFunc(need, func(c string) bool { return c != "memory" && c != "pids" })
		dl, dir, err := l.delegated(uid, need)
		if err != nil {
			info.Reason = err.Error()
			return info
		}
		l, info.Delegated = dl, dir
	}
	name := fmt.Sprintf("moat-probe-%d-%08x", os.Getpid(), rand.Uint32())
	g, err := create(l, name, need, false)
	if err != nil {
		info.Reason = err.Error()
		return info
	}
	info.Kill = g.killHow
	if err := g.Remove(); err != nil {
		info.Reason = err.Error()
		return info
	}
	info.Writable = true
	return info
}
