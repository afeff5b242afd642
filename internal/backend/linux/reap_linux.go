package linux

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// killDescendants SIGKILLs every descendant of pid, found through
// /proc/PID/task/TID/children. It repeats until a pass finds none, so a
// process forked during a pass is caught by the next.
func killDescendants(pid int) {
	for pass := 0; pass < 100; pass++ {
		found := descendants(pid)
		if len(found) == 0 {
			return
		}
		for _, p := range found {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		// Reap what we can, so zombies do not count as found.
		for {
			var ws unix.WaitStatus
			p, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if p <= 0 || err != nil {
				break
			}
		}
	}
}

func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children(p) {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

func children(pid int) []int {
	base := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(base + "/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil && !isZombie(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}
