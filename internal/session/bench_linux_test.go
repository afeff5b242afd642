package session

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkSessionRunTrue runs /bin/true in a warm session, through Run.
func BenchmarkSessionRunTrue(b *testing.B) {
	s := newSession(b, newManager(b, Options{}), CreateRequest{})
	req := RunRequest{Argv: []string{"/bin/true"}}
	for b.Loop() {
		if res, err := s.Run(context.Background(), req, nil); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkExecTrue is plain os/exec of /bin/true, the baseline.
func BenchmarkExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionRatio runs /bin/true three ways in turns, one of each
// per iteration, so that all see the same machine: plain os/exec, the
// library's Cmd in the session's sandbox, and the session's Run. It
// reports the median of each, the session's ratio to exec ("ratio", the
// figure the target names) and to the library ("over-library").
func BenchmarkSessionRatio(b *testing.B) {
	s := newSession(b, newManager(b, Options{}), CreateRequest{})
	req := RunRequest{Argv: []string{"/bin/true"}}
	var bare, lib, boxed []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := s.Sandbox().Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if res, err := s.Run(context.Background(), req, nil); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
		bare, lib, boxed = append(bare, t1.Sub(t0)), append(lib, t2.Sub(t1)), append(boxed, time.Since(t2))
	}
	mb, ml, ms := percentile(bare, 50), percentile(lib, 50), percentile(boxed, 50)
	b.ReportMetric(float64(mb.Microseconds()), "exec-µs")
	b.ReportMetric(float64(ml.Microseconds()), "library-µs")
	b.ReportMetric(float64(ms.Microseconds()), "session-µs")
	b.ReportMetric(float64(ms)/float64(mb), "ratio")
	b.ReportMetric(float64(ms)/float64(ml), "over-library")
}

// BenchmarkCreateFromPool times Create of a session taken from a warm
// pool of one, and reports the p50 and p99 of those times; the refill and
// Close are outside the timing.
func BenchmarkCreateFromPool(b *testing.B) {
	m := newManager(b, Options{WarmPool: 1})
	p := m.policies[0].pool
	var took []time.Duration
	for b.Loop() {
		b.StopTimer()
		waitPool(b, p, 1)
		b.StartTimer()
		t0 := time.Now()
		s, err := m.Create(context.Background(), CreateRequest{})
		took = append(took, time.Since(t0))
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(percentile(took, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(took, 99).Microseconds())/1000, "p99-ms")
}

// percentile is the p-th percentile of d.
func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
