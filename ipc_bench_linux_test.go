package moat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
	"github.com/moat-sandbox/moat/ipc"
)

// ipcBenchScript runs the shim N times from T threads inside the sandbox,
// each call a fresh process as a shell would start it (the shim's sh,
// then this binary as the client, the call, the response), and prints
// every call's duration in nanoseconds and the wall time.
const ipcBenchScript = `import json, subprocess, sys, threading, time
n, threads = int(sys.argv[1]), int(sys.argv[2])
durs, lock = [], threading.Lock()
def worker(k):
    mine = []
    for _ in range(k):
        t0 = time.perf_counter_ns()
        r = subprocess.run(["ping"], stdout=subprocess.DEVNULL)
        mine.append(time.perf_counter_ns() - t0)
        assert r.returncode == 0
    with lock:
        durs.extend(mine)
per = [n // threads + (1 if i < n % threads else 0) for i in range(threads)]
ws = [threading.Thread(target=worker, args=(k,)) for k in per]
t0 = time.perf_counter_ns()
for w in ws: w.start()
for w in ws: w.join()
print(json.dumps({"durs": durs, "wall": time.perf_counter_ns() - t0}))
`

// benchIPC measures b.N calls from threads callers.
func benchIPC(b *testing.B, threads int) {
	var calls atomic.Int64
	r := ipc.NewRouter()
	if err := ipc.Register(r, "ping", func(context.Context, struct{}, ipc.Call) (string, error) {
		calls.Add(1)
		return "pong\n", nil
	}); err != nil {
		b.Fatal(err)
	}
	sb := moattest.NewSandbox(b, moat.Config{IPC: r, Isolation: moat.IsolationDefault})
	// Warm the sandbox's helper and the page cache.
	if out, err := sb.Command("ping").Output(); err != nil || string(out) != "pong\n" {
		b.Fatalf("ping: %v %q", err, out)
	}
	b.ResetTimer()
	out, err := sb.Command("python3", "-c", ipcBenchScript, fmt.Sprint(b.N), fmt.Sprint(threads)).Output()
	b.StopTimer()
	if err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	var res struct {
		Durs []int64
		Wall int64
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Durs) != b.N || calls.Load() != int64(b.N)+1 {
		b.Fatalf("%v: %d durations, %d calls for N=%d", err, len(res.Durs), calls.Load(), b.N)
	}
	sort.Slice(res.Durs, func(i, j int) bool { return res.Durs[i] < res.Durs[j] })
	pct := func(p float64) float64 {
		return float64(res.Durs[int(p*float64(len(res.Durs)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/(float64(res.Wall)/float64(time.Second)), "calls/s")
}

// BenchmarkIPCShimRoundTrip: one call at a time from inside the sandbox,
// shim start to response, p50 and p99.
func BenchmarkIPCShimRoundTrip(b *testing.B) { benchIPC(b, 1) }

// BenchmarkIPCConcurrent8: calls per second with 8 callers at once.
func BenchmarkIPCConcurrent8(b *testing.B) { benchIPC(b, 8) }

// BenchmarkIPCShellLoop: b.N calls from a shell loop inside the sandbox,
// the mean per call (ns/op), and the same loop running /bin/true instead
// (true-ms), so the difference is what the shim, the client's start and
// the call add to a plain program's start.
func BenchmarkIPCShellLoop(b *testing.B) {
	r := ipc.NewRouter()
	if err := ipc.Register(r, "ping", func(context.Context, struct{}, ipc.Call) (string, error) { return "pong\n", nil }); err != nil {
		b.Fatal(err)
	}
	sb := moattest.NewSandbox(b, moat.Config{IPC: r, Isolation: moat.IsolationDefault})
	loop := func(cmd string) time.Duration {
		script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do %s >/dev/null || exit 1; i=$((i+1)); done`, b.N, cmd)
		start := time.Now()
		if out, err := sb.Command("/bin/sh", "-c", script).CombinedOutput(); err != nil {
			b.Fatalf("%s: %v %s", cmd, err, out)
		}
		return time.Since(start)
	}
	loop("true") // warm up
	base := loop("/bin/true")
	b.ResetTimer()
	loop("ping")
	b.StopTimer()
	b.ReportMetric(float64(base)/float64(b.N)/float64(time.Millisecond), "true-ms")
}
