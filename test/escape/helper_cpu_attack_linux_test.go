//go:build linux

package escape_test

// The zygote's CPU is outside --cpu-time and --nice when the sandbox has
// no cgroup (with one, the zygote is in it: clone3 CLONE_INTO_CGROUP, or
// moved at its start). What a sandbox can make it spend is bounded: per
// supervised call, and for the memory watch, however many processes the
// sandbox runs (finding 16).

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// zygoteCPU returns the CPU time (user and system) process pid has used.
func zygoteCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("zygote %d: %v", pid, err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	// utime and stime are fields 14 and 15 of stat; f starts at field 3.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// newZygote runs a first command in sb and returns the zygote that
// appeared since before (the zygotes there were before sb was made).
func newZygote(t *testing.T, sb *moat.Sandbox, before []int) int {
	t.Helper()
	if r := inSandbox(t, sb, "true"); r.Err != nil {
		t.Fatalf("first command: %s", r)
	}
	var fresh []int
	for _, z := range moattest.Zygotes() {
		if !slices.Contains(before, z) {
			fresh = append(fresh, z)
		}
	}
	if len(fresh) != 1 {
		t.Fatalf("want one new zygote, got %v (before %v)", fresh, before)
	}
	return fresh[0]
}

// supervisedCallsProbe makes argv[1] supervised sendmsg calls.
const supervisedCallsProbe = `
import socket, sys
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    a.sendmsg([b"x"])
    b.recv(1)
print("done", flush=True)
`

// supervisedCallCeiling is the most zygote CPU time 1,000 supervised
// calls may cost, with room for a loaded machine (measured here: see the
// log line).
const supervisedCallCeiling = 250 * time.Millisecond

// TestHelperSupervisedCallCPUCeiling: the zygote's CPU per 1,000
// supervised calls stays under a ceiling. The cost of the command itself
// is measured by the same probe making no call, and taken off. Control:
// the probe's calls are supervised at all (the guard is active, and the
// zygote's CPU grows with them).
func TestHelperSupervisedCallCPUCeiling(t *testing.T) {
	need(t, "python3")
	before := moattest.Zygotes()
	sb := guardedSandbox(t, moat.Limits{})
	z := newZygote(t, sb, before)
	const calls = 5000
	run := func(n int) time.Duration {
		before := zygoteCPU(t, z)
		mustContain(t, inSandbox(t, sb, "python3", "-c", supervisedCallsProbe, strconv.Itoa(n)), "done")
		return zygoteCPU(t, z) - before
	}
	base := run(0)
	busy := run(calls)
	per1000 := (busy - base) * 1000 / calls
	t.Logf("zygote CPU: %v for %d supervised calls, %v for the command alone: %v per 1,000 calls", busy, calls, base, per1000)
	if per1000 > supervisedCallCeiling {
		t.Fatalf("the zygote spent %v of CPU per 1,000 supervised calls, past the ceiling of %v", per1000, supervisedCallCeiling)
	}
	if busy <= base {
		t.Fatalf("control: %d calls cost the zygote no CPU (%v vs %v): are they supervised?", calls, busy, base)
	}
}

// manyProcsProbe starts argv[1] sleeping processes, says UP, and waits.
const manyProcsProbe = `
import subprocess, sys, time
kids = [subprocess.Popen(["sleep", "60"]) for _ in range(int(sys.argv[1]))]
print("UP", flush=True)
time.sleep(60)
`

// TestHelperMemwatchCPUShare is finding 16: with 1,000 sleeping processes
// the 50 ms poll cost the zygote about 0.6 of a CPU, outside --cpu-time.
// The watch now reads statm and waits at least 20 times what a sample
// cost: at most 1/20 of a CPU. Measured over 3 s at 1 and 1,000
// processes; the ceiling is 10%, for a loaded machine.
func TestHelperMemwatchCPUShare(t *testing.T) {
	need(t, "python3")
	for _, n := range []int{1, 1000} {
		t.Run(strconv.Itoa(n)+" processes", func(t *testing.T) {
			zs := moattest.Zygotes()
			sb := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 32 << 30, Processes: 1200, Timeout: time.Minute}})
			z := newZygote(t, sb, zs)
			c := sb.Command("python3", "-c", manyProcsProbe, strconv.Itoa(n))
			out, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || strings.TrimSpace(line) != "UP" {
				t.Fatalf("the probe did not start its processes: %q %v", line, err)
			}
			time.Sleep(500 * time.Millisecond)
			before, start := zygoteCPU(t, z), time.Now()
			time.Sleep(3 * time.Second)
			share := float64(zygoteCPU(t, z)-before) / float64(time.Since(start))
			t.Logf("zygote CPU with %d sleeping processes: %.1f%% of one CPU", n, 100*share)
			if share > 0.10 {
				t.Fatalf("the zygote took %.1f%% of a CPU watching %d processes", 100*share, n)
			}
		})
	}
}
