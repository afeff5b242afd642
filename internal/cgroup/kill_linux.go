package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// killTimeout bounds how long Kill keeps signalling and waiting.
const killTimeout = time.Second

// Kill kills every process in the group and its child groups, and waits up
// to about a second for them to be gone. With a v2 group that has
// cgroup.kill it writes that file; otherwise it freezes the group where a
// freezer is available (v2 cgroup.freeze or the v1 freezer), sends SIGKILL
// to every pid listed in cgroup.procs, thaws, and repeats until the group
// is empty or the second has passed. Every pid is re-checked to still be in
// the group through a pidfd before it is signalled, so a recycled pid is
// never hit. This process itself is never signalled. Kill is idempotent;
// on a nil or removed Group it does nothing.
func (g *Group) Kill() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.removed {
		return nil
	}
	return g.kill()
}

func (g *Group) kill() error {
	var errs []error
	if g.killHow == "v2" {
		if err := setFile(g.dirs[0].dir, "cgroup.kill", "1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err) // fall back to signalling below
		}
	}
	frozen := false
	if g.killHow == "v2-freeze" || g.killHow == "v1-freezer" {
		frozen = g.freeze(true)
	}
	defer func() {
		if frozen {
			g.freeze(false)
		}
	}()
	deadline := time.Now().Add(killTimeout)
	for {
		pids := g.members()
		if len(pids) == 0 {
			return nil // a cgroup.kill error is moot once the group is empty
		}
		if time.Now().After(deadline) {
			errs = append(errs, fmt.Errorf("cgroup: %s: %d processes still present after %v", g.name, len(pids), killTimeout))
			return errors.Join(errs...)
		}
		for _, pid := range pids {
			g.signal(pid)
		}
		if frozen {
			// Frozen tasks die only once thawed; while frozen none
			// could fork, so the list just signalled was complete.
			g.freeze(false)
			frozen = false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// freeze freezes (on) or thaws the group with the mechanism in killHow.
// Freezing waits up to 100 ms for the kernel to report the group frozen.
// It reports whether the freeze request was accepted.
func (g *Group) freeze(on bool) bool {
	for _, m := range g.dirs {
		var file, val, done string
		switch {
		case g.killHow == "v2-freeze" && m.v2:
			file, val, done = "cgroup.freeze", "0", ""
			if on {
				val, done = "1", "frozen 1"
			}
		case g.killHow == "v1-freezer" && slices.Contains(m.controllers, "freezer"):
			file, val, done = "freezer.state", "THAWED", ""
			if on {
				val, done = "FROZEN", "FROZEN"
			}
		default:
			continue
		}
		if writeFile(path.Join(m.dir, file), val) != nil {
			return false
		}
		check := file
		if m.v2 {
			check = "cgroup.events"
		}
		for end := time.Now().Add(100 * time.Millisecond); done != "" && time.Now().Before(end); {
			b, err := os.ReadFile(path.Join(m.dir, check))
			if err != nil || bytes.Contains(b, []byte(done)) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		return true
	}
	return false
}

// members lists the live (not zombie) processes in every directory of the
// group and its child groups, without this process.
func (g *Group) members() []int {
	self := os.Getpid()
	var pids []int
	for _, m := range g.dirs {
		for _, dir := range subdirs(m.dir) {
			b, err := os.ReadFile(path.Join(dir, "cgroup.procs"))
			if err != nil {
				continue
			}
			for f := range strings.FieldsSeq(string(b)) {
				pid, err := strconv.Atoi(f)
				if err != nil || pid == self || slices.Contains(pids, pid) || !alive(pid) {
					continue
				}
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	st := b[i+2]
	return st != 'Z' && st != 'X'
}

// signal sends SIGKILL to pid if it is still in the group. The pidfd pins
// the process across the membership check, so a pid reused by an unrelated
// process in the meantime is left alone.
func (g *Group) signal(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) && g.contains(pid) {
			_ = unix.Kill(pid, unix.SIGKILL) // kernel < 5.3
		}
		return
	}
	defer unix.Close(fd)
	if !g.contains(pid) {
		return
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); errors.Is(err, unix.ENOSYS) {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// contains reports whether /proc/<pid>/cgroup places pid in one of the
// group's directories or below.
func (g *Group) contains(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	pc := parseProcCgroup(string(b))
	for _, m := range g.dirs {
		var p string
		var ok bool
		if m.v2 {
			p, ok = pc.v2, pc.hasV2
		} else if len(m.controllers) > 0 {
			p, ok = pc.v1[m.controllers[0]]
		}
		if ok && (p == m.rel || strings.HasPrefix(p, m.rel+"/")) {
			return true
		}
	}
	return false
}
