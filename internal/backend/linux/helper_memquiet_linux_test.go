package linux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The sockstat files of this host parse, and the memory counters count
// only where the namespace has sockets of that kind beyond moat's own.
func TestParseSockstat(t *testing.T) {
	v4 := "sockets: used 37\nTCP: inuse 3 orphan 0 tw 4 alloc 5 mem 7\nUDP: inuse 0 mem 9\nUDPLITE: inuse 0\nRAW: inuse 0\nFRAG: inuse 0 memory 0\n"
	v6 := "TCP6: inuse 0\nUDP6: inuse 0\nUDPLITE6: inuse 0\nRAW6: inuse 0\nFRAG6: inuse 0 memory 0\n"
	for _, tc := range []struct {
		name   string
		in     string
		own    int
		ok     bool
		tcp    int64
		udp    int64
		inuse0 int
	}{
		{"moat's listeners only", v4 + v6, 3, true, -1, -1, 3},
		{"a socket of the sandbox", v4 + v6, 2, true, 7, -1, 3},
		{"a UDP socket", v4 + v6[:len(v6)-len("UDP6: inuse 0\nUDPLITE6: inuse 0\nRAW6: inuse 0\nFRAG6: inuse 0 memory 0\n")] + "UDP6: inuse 1\nUDPLITE6: inuse 0\nRAW6: inuse 0\nFRAG6: inuse 0 memory 0\n", 3, true, -1, 9, 3},
		{"no sockstat6", v4, 3, false, 0, 0, 0},
		{"no TCP mem", "TCP: inuse 3\n" + v4[len("sockets: used 37\nTCP: inuse 3 orphan 0 tw 4 alloc 5 mem 7\n"):] + v6, 3, false, 0, 0, 0},
		{"negative", "TCP: inuse -1 mem 7\n" + v4[len("sockets: used 37\nTCP: inuse 3 orphan 0 tw 4 alloc 5 mem 7\n"):] + v6, 3, false, 0, 0, 0},
		{"empty", "", 0, false, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig, ok := parseSockstat([]byte(tc.in), tc.own)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.ok, sig)
			}
			if ok && (sig.tcpMem != tc.tcp || sig.udpMem != tc.udp || sig.inuse[0] != tc.inuse0) {
				t.Fatalf("got %+v, want TCP mem %d, UDP mem %d, TCP inuse %d", sig, tc.tcp, tc.udp, tc.inuse0)
			}
		})
	}
	a, err1 := os.ReadFile("/proc/net/sockstat")
	b, err2 := os.ReadFile("/proc/net/sockstat6")
	if err1 != nil || err2 != nil {
		t.Fatalf("this host's sockstat: %v %v", err1, err2)
	}
	if _, ok := parseSockstat(append(a, b...), 0); !ok {
		t.Fatalf("this host's sockstat does not parse:\n%s%s", a, b)
	}
}

func FuzzParseSockstat(f *testing.F) {
	f.Add([]byte("TCP: inuse 3 orphan 0 tw 4 alloc 5 mem 7\nUDP: inuse 0 mem 9\nFRAG: inuse 0 memory 0\n"), 1)
	f.Fuzz(func(t *testing.T, b []byte, own int) {
		sig, ok := parseSockstat(b, own)
		if ok && (sig.frag < 0 || sig.frag6 < 0 || sig.tcpMem < -1 || sig.udpMem < -1) {
			t.Fatalf("negative counters: %+v", sig)
		}
	})
}

func TestParseSchedstat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want threadRun
		ok   bool
	}{
		{"1373886 0 1\n", threadRun{1373886, 1}, true},
		{"1 2 3", threadRun{1, 3}, true},
		{"1 2", threadRun{}, false},
		{"1 2 3 4", threadRun{}, false},
		{"-1 2 3", threadRun{}, false},
		{"", threadRun{}, false},
	} {
		got, ok := parseSchedstat([]byte(tc.in))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseSchedstat(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseSchedstat(f *testing.F) {
	f.Add([]byte("1373886 0 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) { parseSchedstat(b) })
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string]int{
		"0-1\n": 2, "0": 1, "0-3,8,10-11": 7, "": 0, "3-1": 0, "a": 0, "0-": 0, "-1": 0, "0-99999999": 0,
	} {
		if got := parseCPUList(in); got != want {
			t.Errorf("parseCPUList(%q) = %d, want %d", in, got, want)
		}
	}
	if possibleCPUs() < 1 {
		t.Errorf("possibleCPUs() = %d on this host", possibleCPUs())
	}
}

func FuzzParseCPUList(f *testing.F) {
	f.Add("0-3,8")
	f.Fuzz(func(t *testing.T, s string) {
		if n := parseCPUList(s); n < 0 || n > 1<<16 {
			t.Fatalf("parseCPUList(%q) = %d", s, n)
		}
	})
}

// The wait grows with the headroom, up to quietFullInterval, and never
// drops below the interval of before.
func TestQuietWait(t *testing.T) {
	for _, tc := range []struct {
		headroom int64
		cpus     int
		cost     time.Duration
		want     time.Duration
	}{
		{0, 4, 0, memoryPollInterval},
		{-5, 4, 0, memoryPollInterval},
		{1 << 30, 0, 0, memoryPollInterval},
		{1 << 30, 4, 0, memoryPollInterval},                         // 1 GiB / 128 GiB/s: 8 ms
		{32 << 30, 2, 0, 500 * time.Millisecond},                    // 32 GiB / 64 GiB/s
		{1 << 50, 2, 0, quietFullInterval},                          // capped
		{1 << 30, 4, 10 * time.Millisecond, 200 * time.Millisecond}, // the duty cap
	} {
		if got := quietWait(tc.headroom, tc.cpus, tc.cost); got != tc.want {
			t.Errorf("quietWait(%d, %d, %v) = %v, want %v", tc.headroom, tc.cpus, tc.cost, got, tc.want)
		}
	}
}

// A snapshot of a sleeping process stays unchanged; one that runs, or
// ends, changes it (seen through a directory of links into the real
// /proc, as BenchmarkMemorySample does).
func TestSnapshotQuietAndActive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		argv  []string
		quiet bool
	}{
		{"sleeping", []string{"sleep", "30"}, true},
		{"running", []string{"sh", "-c", "while :; do :; done"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := exec.Command(tc.argv[0], tc.argv[1:]...)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
			dir := t.TempDir()
			if err := os.Symlink("/proc/"+strconv.Itoa(c.Process.Pid), filepath.Join(dir, "2")); err != nil {
				t.Fatal(err)
			}
			s, err := newProcSampler(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			time.Sleep(50 * time.Millisecond) // past the exec
			snap, err := s.snapshot("1", nil)
			if err != nil || len(snap) != 1 {
				t.Fatalf("snapshot = %v, %v; want one thread", snap, err)
			}
			time.Sleep(100 * time.Millisecond)
			if got := s.unchanged(snap); got != tc.quiet {
				t.Fatalf("unchanged = %v after 100 ms, want %v", got, tc.quiet)
			}
			_ = c.Process.Kill()
			_ = c.Wait()
			if s.unchanged(snap) {
				t.Fatal("unchanged after the process ended")
			}
		})
	}
}
