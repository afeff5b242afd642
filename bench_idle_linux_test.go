//go:build linux

package moat_test

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// BenchmarkIdleSandboxCost is the cost of a sandbox that waits: the CPU
// time per second of wall time that this process, the sandbox's zygote,
// its init and its commands take while nothing happens, with no command
// running ("no-command") and with one idle command ("sleep"). Each
// iteration is one second of waiting; run it with -benchtime=10x for ten
// seconds; helpers-cpu-ms/s is the zygote's and the init's share. Both sandboxes ran a first command (/bin/true), as a session
// has: a sandbox is built by its first command. It reports cpu-ms/s and, where this user can read the
// helpers' smaps_rollup (root: the zygote is not dumpable), their PSS in
// KiB: the zygote and the init together.
func BenchmarkIdleSandboxCost(b *testing.B) {
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"no-command", nil},
		{"sleep", []string{"sleep", "1000"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			before := moattest.Zygotes()
			sb := newSandbox(b, moat.Config{})
			var pids []int
			if err := sb.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
			if len(tc.argv) > 0 {
				c := sb.Command(tc.argv[0], tc.argv[1:]...)
				if err := c.Start(); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
				pids = append(pids, c.Process.Pid)
			}
			zygote := waitZygote(b, before)
			helpers := append([]int{zygote}, childrenOf(zygote)...)
			pids = append(append(pids, os.Getpid()), helpers...)
			time.Sleep(time.Second) // past the start-up's work (idleTrimDelay)
			cpu0, h0, t0 := cpuTime(pids), cpuTime(helpers), time.Now()
			for b.Loop() {
				time.Sleep(time.Second)
			}
			wall := time.Since(t0)
			perSecond := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / wall.Seconds() }
			b.ReportMetric(perSecond(cpuTime(pids)-cpu0), "cpu-ms/s")
			b.ReportMetric(perSecond(cpuTime(helpers)-h0), "helpers-cpu-ms/s")
			b.ReportMetric(0, "ns/op")
			var pss int64
			for _, p := range helpers {
				kb, ok := pssKB(p)
				if !ok {
					return // not readable by this user
				}
				pss += kb
			}
			b.ReportMetric(float64(pss), "helpers-PSS-KiB")
		})
	}
}

// waitZygote returns the zygote of this process that was not in before.
func waitZygote(b *testing.B, before []int) int {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, z := range moattest.Zygotes() {
			if !slices.Contains(before, z) {
				return z
			}
		}
	}
	b.Fatal("no new zygote")
	return 0
}

// childrenOf returns the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// cpuTime is the CPU time every live thread of pids has used, from
// schedstat (nanoseconds; stat's utime and stime count 10 ms ticks).
func cpuTime(pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/task/"
		tids, _ := os.ReadDir(dir)
		for _, tid := range tids {
			b, err := os.ReadFile(dir + tid.Name() + "/schedstat")
			if err != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) == 0 {
				continue
			}
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(ns)
		}
	}
	return total
}

// pssKB is the Pss of process pid, in KiB; false when it cannot be read.
func pssKB(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, err := strconv.ParseInt(f[0], 10, 64)
				return n, err == nil
			}
		}
	}
	return 0, false
}
