package moat_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// concurrentSandboxes is how many sandboxes BenchmarkConcurrentSandboxes
// starts at once.
const concurrentSandboxes = 100

// BenchmarkConcurrentSandboxes creates 100 sandboxes from one process at
// once, each running /bin/true as its first command, and reports the p50
// and p99 of the per-sandbox start-up (New and the first command) and the
// host memory of an idle sandbox: the resident memory of every helper
// process (the zygote and the sandbox's init) divided by the sandboxes, measured
// while all of them are up and idle, both as RSS (each process counts the
// pages it shares with the others, such as the program's text) and as PSS
// (shared pages split among their users).
func BenchmarkConcurrentSandboxes(b *testing.B) {
	var p50, p99, rssPer, pssPer float64
	for b.Loop() {
		took := make([]time.Duration, concurrentSandboxes)
		sbs := make([]*moat.Sandbox, concurrentSandboxes)
		errs := make([]error, concurrentSandboxes)
		var wg sync.WaitGroup
		for i := range concurrentSandboxes {
			wg.Go(func() {
				t := time.Now()
				sb, err := moat.New(moat.Config{})
				if err == nil {
					err = sb.Command("/bin/true").Run()
				}
				took[i], sbs[i], errs[i] = time.Since(t), sb, err
			})
		}
		wg.Wait()
		rss, pss := descendantsMemory(os.Getpid())
		for i, sb := range sbs {
			if sb != nil {
				sb.Close()
			}
			if errs[i] != nil {
				b.Fatalf("sandbox %d: %v", i, errs[i])
			}
		}
		slices.Sort(took)
		p50 = float64(took[len(took)/2].Microseconds()) / 1000
		p99 = float64(took[len(took)*99/100].Microseconds()) / 1000
		rssPer = float64(rss) / concurrentSandboxes / (1 << 20)
		pssPer = float64(pss) / concurrentSandboxes / (1 << 20)
	}
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
	b.ReportMetric(p99/p50, "p99/p50")
	b.ReportMetric(rssPer, "RSS-MiB/idle-sandbox")
	b.ReportMetric(pssPer, "PSS-MiB/idle-sandbox")
}

// descendants lists every process below pid (not pid itself), as /proc
// lists children per thread.
func descendants(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(f); err == nil {
				out = append(append(out, child), descendants(child)...)
			}
		}
	}
	return out
}

// descendantsMemory adds up the resident and proportional set sizes, in
// bytes, of every process below pid.
func descendantsMemory(pid int) (rss, pss int64) {
	for _, p := range descendants(pid) {
		rss += procKB(p, "status", "VmRSS:")
		pss += procKB(p, "smaps_rollup", "Pss:")
	}
	return rss, pss
}

// procKB reads the "key  N kB" line of /proc/pid/file, in bytes; 0 when
// missing.
func procKB(pid int, file, key string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkIdleSandboxCPU starts 10 sandboxes, lets them sit idle for a
// second after their first command, and reports the CPU time their helper
// processes (the zygote and the init) used meanwhile, per sandbox and
// second: the price of a sandbox an agent keeps open between commands.
func BenchmarkIdleSandboxCPU(b *testing.B) {
	const n = 10
	var perSandbox float64
	for b.Loop() {
		var sbs []*moat.Sandbox
		for range n {
			sb, err := moat.New(moat.Config{})
			if err == nil {
				err = sb.Command("/bin/true").Run()
			}
			if err != nil {
				b.Fatal(err)
			}
			sbs = append(sbs, sb)
		}
		before := descendantsCPU(os.Getpid())
		time.Sleep(time.Second)
		used := descendantsCPU(os.Getpid()) - before
		for _, sb := range sbs {
			sb.Close()
		}
		perSandbox = float64(used.Microseconds()) / 1000 / n
	}
	b.ReportMetric(perSandbox, "CPU-ms/s/idle-sandbox")
}

// descendantsCPU adds up the user and system time of every process below
// pid, from /proc/PID/stat (in clock ticks of 10 ms).
func descendantsCPU(pid int) time.Duration {
	var total time.Duration
	for _, p := range descendants(pid) {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: utime is the
		// 12th, stime the 13th.
		rest := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		if len(rest) > 12 {
			u, _ := strconv.ParseInt(rest[11], 10, 64)
			s, _ := strconv.ParseInt(rest[12], 10, 64)
			total += time.Duration(u+s) * 10 * time.Millisecond
		}
	}
	return total
}
