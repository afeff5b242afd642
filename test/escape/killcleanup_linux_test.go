//go:build linux

package escape_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// descendants lists every process below pid, by walking /proc's parent
// links.
func descendants(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	sort.Ints(out)
	return out
}

// pfExiting is the kernel's PF_EXITING, in /proc/PID/stat's flags: the
// process is in do_exit and runs no code of its own again.
const pfExiting = 0x4

// procState reads pid's state: gone (no such process), or dead (a zombie,
// or exiting: nothing of it runs any more).
func procState(pid int) (gone, dead bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true, true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 7 {
		return true, true
	}
	flags, _ := strconv.ParseUint(f[6], 10, 64)
	return false, f[0] == "Z" || f[0] == "X" || flags&pfExiting != 0
}

// killTimes are how long after SIGKILL of moat its sandbox took to stop.
type killTimes struct {
	// dead: every process below moat is a zombie or exiting, so nothing
	// of the sandbox runs any more.
	dead time.Duration
	// gone: every one has also been reaped (its pidfd readable for the
	// exiting, /proc entry gone for the zombies' release is not needed:
	// a zombie's pidfd is readable too).
	gone time.Duration
}

// killMoatAndWait starts a sandbox under a moat CLI (moat run -- sleep
// 1000), SIGKILLs moat once the sleep runs, and measures, polling every
// millisecond, when every process that was below moat is dead and when
// every one has exited for good (pidfd readable). timeout bounds the wait.
func killMoatAndWait(exe, dir string, timeout time.Duration) (killTimes, []int, error) {
	var kt killTimes
	c := exec.Command(exe, "run", "--", "sleep", "1000")
	c.Dir = dir
	c.Env = append(os.Environ(), cliEnv+"=1")
	if err := c.Start(); err != nil {
		return kt, nil, err
	}
	defer c.Wait()
	var procs []int
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		procs = descendants(c.Process.Pid)
		sleeping := false
		for _, p := range procs {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); string(b) == "sleep\x001000\x00" {
				sleeping = true
			}
		}
		if sleeping {
			break
		}
		if time.Now().After(end) {
			c.Process.Kill()
			return kt, procs, fmt.Errorf("the sandboxed sleep never ran")
		}
	}
	fds := map[int]int{}
	for _, p := range procs {
		if fd, err := unix.PidfdOpen(p, 0); err == nil {
			defer unix.Close(fd)
			fds[p] = fd
		}
	}
	start := time.Now()
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		return kt, procs, err
	}
	for {
		allDead, allGone := true, true
		for _, p := range procs {
			_, dead := procState(p)
			allDead = allDead && dead
			if fd, ok := fds[p]; ok {
				pf := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
				if n, _ := unix.Poll(pf, 0); n == 0 {
					allGone = false
				}
			}
		}
		now := time.Since(start)
		if allDead && kt.dead == 0 {
			kt.dead = now
		}
		if allDead && allGone {
			kt.gone = now
			return kt, procs, nil
		}
		if now > timeout {
			for _, p := range procs {
				_ = unix.Kill(p, unix.SIGKILL)
			}
			return kt, procs, fmt.Errorf("processes below moat not gone %v after its SIGKILL (all dead: %v)", timeout, allDead)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestKillMoatCleansUp: SIGKILL of moat (the CLI) ends every process of
// its sandbox, the helper and init included, within a generous deadline
// (10 s: the figure itself, idle and under load, is
// BenchmarkKillMoatCleanup's). The control is the same set of processes
// seen alive before the kill, which the wait watches.
func TestKillMoatCleansUp(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	kt, procs, err := killMoatAndWait(exe, t.TempDir(), 10*time.Second)
	if err != nil {
		t.Fatalf("%v (processes %v)", err, procs)
	}
	if len(procs) < 2 {
		t.Fatalf("control: only %v below moat before the kill; want the helper and the sleep at least", procs)
	}
	t.Logf("%d processes below moat: all dead %v, all exited %v after its SIGKILL", len(procs), kt.dead, kt.gone)
}

// BenchmarkKillMoatCleanup measures the time from SIGKILL of moat until
// every process of its sandbox is dead (ms-dead: zombie or exiting, no
// code of the sandbox runs) and until every one has exited for good
// (ms-exited: pidfd readable), polled each millisecond, on
// an idle machine and with one busy loop per CPU running beside it (at the
// same priority, outside the sandbox). Only that interval is timed;
// starting each sandbox is not.
//
//	/path/to/escape.test -test.run '^$' -test.bench BenchmarkKillMoatCleanup -test.benchtime 20x
func BenchmarkKillMoatCleanup(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, load := range []int{0, runtime.NumCPU()} {
		name := "idle"
		if load > 0 {
			name = fmt.Sprintf("busy-%d", load)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < load; i++ {
				hog := exec.Command("/bin/sh", "-c", "while :; do :; done")
				if err := hog.Start(); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
			}
			dir := b.TempDir()
			var dead, gone, worst time.Duration
			b.StopTimer()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				kt, procs, err := killMoatAndWait(exe, dir, 30*time.Second)
				if err != nil {
					b.Fatalf("%v (processes %v)", err, procs)
				}
				dead += kt.dead
				gone += kt.gone
				worst = max(worst, kt.gone)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(dead)/float64(b.N), "ms-dead/kill")
			b.ReportMetric(ms(gone)/float64(b.N), "ms-exited/kill")
			b.ReportMetric(ms(worst), "max-ms-exited")
			b.ReportMetric(0, "ns/op")
		})
	}
}
