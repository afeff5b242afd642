package linux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// procTree writes a fake /proc: files maps a path below it to its
// contents; a value of "<dir>" makes a directory instead (a read then
// fails with EISDIR, which stands for any read error).
func procTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for path, body := range files {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if body == "<dir>" {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestProcSamplerMeasures: the watch counts a leader that exited through
// a live thread, a zombie, a thread group whose every task is exiting
// and a process gone as nothing, skips the init,
// and fails, never counting 0, on what it cannot read.
func TestProcSamplerMeasures(t *testing.T) {
	page := int64(os.Getpagesize())
	cases := []struct {
		name    string
		files   map[string]string
		want    int64 // pages
		wantErr bool
	}{
		{"plain", map[string]string{"2/statm": "1000 25 3 1 0 20 0\n"}, 25, false},
		{"init skipped", map[string]string{"1/statm": "1000 999 0 0 0 0 0\n", "2/statm": "10 5 0 0 0 0 0\n"}, 5, false},
		{"zombie", map[string]string{"2/statm": "0 0 0 0 0 0 0\n", "2/task/2/statm": "0 0 0 0 0 0 0\n", "2/task/2/stat": "2 (p) Z 1 2 2 0 -1 4194316 0\n"}, 0, false},
		{"exit_group under way", map[string]string{
			"2/statm": "0 0 0 0 0 0 0\n", "2/task/2/statm": "0 0 0 0 0 0 0\n", "2/task/2/stat": "2 (p) Z 1 2 2 0 -1 4194316 0\n",
			"2/task/3/statm": "0 0 0 0 0 0 0\n", "2/task/3/stat": "3 (p) S 1 2 2 0 -1 4194564 0\n",
		}, 0, false},
		{"gone", map[string]string{"2/task/2/statm": "<dir>"}, 0, false},
		{"leader exited", map[string]string{
			"2/statm": "0 0 0 0 0 0 0\n", "2/task/2/statm": "0 0 0 0 0 0 0\n", "2/task/2/stat": "2 (p) Z 1 2 2 0 -1 4194316 0\n",
			"2/task/3/statm": "900 50 0 0 0 0 0\n", "2/task/3/stat": "3 (p) S 1 2 2 0 -1 4194560 0\n",
		}, 50, false},
		{"leader exited, threads hide", map[string]string{
			"2/statm": "0 0 0 0 0 0 0\n", "2/task/2/statm": "0 0 0 0 0 0 0\n", "2/task/2/stat": "2 (p) Z 1 2 2 0 -1 4194316 0\n",
			"2/task/3/statm": "0 0 0 0 0 0 0\n", "2/task/3/stat": "3 (p) S 1 2 2 0 -1 4194560 0\n",
		}, 0, true},
		{"unreadable stat", map[string]string{"2/statm": "0 0 0 0 0 0 0\n", "2/task/3/statm": "0 0 0 0 0 0 0\n", "2/task/3/stat": "<dir>"}, 0, true},
		{"garbage stat", map[string]string{"2/statm": "0 0 0 0 0 0 0\n", "2/task/3/statm": "0 0 0 0 0 0 0\n", "2/task/3/stat": "3 (p) S 4\n"}, 0, true},
		{"unreadable statm", map[string]string{"2/statm": "<dir>"}, 0, true},
		{"garbage statm", map[string]string{"2/statm": "VmRSS: 0\n"}, 0, true},
		{"unreadable thread", map[string]string{"2/statm": "0 0 0 0 0 0 0\n", "2/task/3/stat": "3 (p) S 1 2 2 0 -1 4194560 0\n", "2/task/3/statm": "<dir>"}, 0, true},
		{"large address space: page tables counted", map[string]string{
			"2/statm": "4194304 25 0 0 0 0 0\n", "2/status": "Name:\tVmPTE: 1 kB\nVmRSS:\t100 kB\nVmPTE:\t   8192 kB\n",
		}, 25 + 8192*1024/page, false},
		{"small address space: status not read", map[string]string{
			"2/statm": "1000 25 0 0 0 0 0\n", "2/status": "VmPTE:\t8192 kB\n",
		}, 25, false},
		{"large address space, unreadable status", map[string]string{"2/statm": "4194304 25 0 0 0 0 0\n", "2/status": "<dir>"}, 0, true},
		{"many", map[string]string{"2/statm": "1 1 0\n", "3/statm": "1 2 0\n", "40/statm": "1 3 0\n", "self/statm": "1 100 0\n"}, 6, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newProcSampler(procTree(t, tc.files))
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			got, err := s.processes("1")
			if tc.wantErr {
				if err == nil {
					t.Fatalf("counted %d bytes, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want*page {
				t.Fatalf("processes = %d, %v; want %d pages", got, err, tc.want)
			}
		})
	}
}

func TestParseStatm(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1000 25 3 1 0 20 0\n", 25, true},
		{"0 0 0 0 0 0 0\n", 0, true},
		{"1000\n", 0, false},
		{"", 0, false},
		{"x 1", 0, false},
		{"1 99999999999999999999999", 0, false},
	}
	for _, tc := range cases {
		_, got, ok := parseStatm([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseStatm(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseStatm(f *testing.F) {
	for _, s := range []string{"1000 25 3 1 0 20 0\n", "0 0", "", "  7  8", "9223372036854775807 9223372036854775807"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		size, n, ok := parseStatm(b)
		if n < 0 || size < 0 || (!ok && (n != 0 || size != 0)) {
			t.Fatalf("parseStatm(%q) = %d, %v", b, n, ok)
		}
	})
}

// TestPollIntervalCapsDuty: the watch takes at most 1/memoryWatchDuty of
// a CPU, however long a sample takes.
func TestPollIntervalCapsDuty(t *testing.T) {
	for _, cost := range []time.Duration{0, time.Millisecond, 10 * time.Millisecond, 300 * time.Millisecond} {
		iv := pollInterval(cost)
		if iv < memoryPollInterval || cost*memoryWatchDuty > iv {
			t.Errorf("pollInterval(%v) = %v: more than 1/%d of a CPU", cost, iv, memoryWatchDuty)
		}
	}
}

// TestPendingBudget: calls, bytes and descriptors are each bounded, and
// what is given back can be taken again.
func TestPendingBudget(t *testing.T) {
	var b pendingBudget
	for i := 0; i < maxPendingCalls; i++ {
		if !b.take(1, 0, 0) {
			t.Fatalf("call %d refused within the bound", i)
		}
	}
	if b.take(1, 0, 0) {
		t.Fatal("a call past the bound was taken")
	}
	b.give(maxPendingCalls, 0, 0)
	if !b.take(0, maxPendingBytes, maxPendingFDs) || b.take(0, 1, 0) || b.take(0, 0, 1) {
		t.Fatal("the byte or descriptor bound does not hold")
	}
	if b.heldBytes() != maxPendingBytes {
		t.Fatalf("heldBytes = %d", b.heldBytes())
	}
	b.give(0, maxPendingBytes, maxPendingFDs)
	if !b.take(1, 1, 1) {
		t.Fatal("what was given back cannot be taken again")
	}
	b.give(1, 1, 1)

	// Past the calls, a call waits in the queue, up to its bound, and
	// takes the first call given back.
	var q pendingBudget
	for i := 0; i < maxPendingCalls; i++ {
		if taken, _ := q.takeCall(queuedCall{}); !taken {
			t.Fatalf("call %d not taken within the bound", i)
		}
	}
	for i := 0; i < maxQueuedCalls; i++ {
		if taken, queued := q.takeCall(queuedCall{listener: i}); taken || !queued {
			t.Fatalf("call %d past the bound: taken %v, queued %v", i, taken, queued)
		}
	}
	if taken, queued := q.takeCall(queuedCall{}); taken || queued {
		t.Fatal("a call past the queue was queued")
	}
	next, ok := q.give(1, 0, 0)
	if !ok || next.listener != 0 {
		t.Fatalf("give = %v, %v; want the first queued call", next, ok)
	}
	if taken, _ := q.takeCall(queuedCall{}); taken {
		t.Fatal("the call given back was not reserved for the queued one")
	}
}

// BenchmarkMemorySample measures one sample of the watch's process
// walk at 1 and 1,000 processes (sleeping children, seen through a
// directory of links into the real /proc), with statm as the watch reads
// it, and with status, as it read it before. Its cost per process is
// what the duty cap (pollInterval) turns into a longer interval.
func BenchmarkMemorySample(b *testing.B) {
	for _, n := range []int{1, 1000} {
		dir := b.TempDir()
		var kids []*exec.Cmd
		for i := 0; i < n; i++ {
			c := exec.Command("sleep", "120")
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			kids = append(kids, c)
			if err := os.Symlink("/proc/"+strconv.Itoa(c.Process.Pid), filepath.Join(dir, strconv.Itoa(i+2))); err != nil {
				b.Fatal(err)
			}
		}
		s, err := newProcSampler(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("statm/procs="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.processes("1"); err != nil {
					b.Fatal(err)
				}
			}
			perSample := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			interval := pollInterval(time.Duration(perSample))
			b.ReportMetric(perSample/float64(time.Millisecond)*1000/float64(interval.Milliseconds()), "cpu-ms/s")
		})
		b.Run("status(before)/procs="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				for i := 0; i < n; i++ {
					body, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i+2), "status"))
					if err == nil {
						_ = statusKB(body, "VmRSS:")
					}
				}
			}
			perSample := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(perSample/float64(time.Millisecond)*1000/float64(memoryPollInterval.Milliseconds()), "cpu-ms/s")
		})
		s.close()
		for _, c := range kids {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
}

func TestParseStatStateFlags(t *testing.T) {
	cases := []struct {
		in    string
		state byte
		flags uint64
		ok    bool
	}{
		{"12 (sh) S 1 12 12 0 -1 4194560 100 0 0 0", 'S', 4194560, true},
		{"12 (a) b) Z 1 12 12 0 -1 4194564 0", 'Z', 4194564, true},
		{"12 (x) R 1 2 3 4 5 4 7", 'R', 4, true},
		{"12 (x) R 1 2 3 4 5", 0, 0, false},
		{"12 (x) RR 1 2 3 4 5 6", 0, 0, false},
		{"12 x R 1 2 3 4 5 6", 0, 0, false},
		{"12 (x) R 1 2 3 4 5 -6", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tc := range cases {
		st, fl, ok := parseStatStateFlags([]byte(tc.in))
		if st != tc.state || fl != tc.flags || ok != tc.ok {
			t.Errorf("parseStatStateFlags(%q) = %c, %d, %v; want %c, %d, %v", tc.in, st, fl, ok, tc.state, tc.flags, tc.ok)
		}
	}
}

func FuzzParseStatStateFlags(f *testing.F) {
	for _, s := range []string{"12 (sh) S 1 12 12 0 -1 4194560 100", "1 ()) Z 0 0 0 0 0 4", "", ")"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, fl, ok := parseStatStateFlags(b)
		if !ok && (st != 0 || fl != 0) {
			t.Fatalf("parseStatStateFlags(%q) = %c, %d, false", b, st, fl)
		}
	})
}
