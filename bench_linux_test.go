//go:build linux

package moat_test

import (
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// BenchmarkSandboxTrue is a warm sandbox's Command("/bin/true").Run(), with
// every layer the host offers.
func BenchmarkSandboxTrue(b *testing.B) {
	sb := newSandbox(b, moat.Config{})
	for b.Loop() {
		if err := sb.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecTrue is plain os/exec, the baseline.
func BenchmarkExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarmRatio runs the two above in turns, one of each per
// iteration, so that both see the same machine, and reports the median
// of each and their ratio (sandbox/exec): the figure the start-up target
// names, which a noisy machine moves far less than either alone.
func BenchmarkWarmRatio(b *testing.B) {
	sb := newSandbox(b, moat.Config{})
	var bare, boxed []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := sb.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		bare, boxed = append(bare, t1.Sub(t0)), append(boxed, time.Since(t1))
	}
	mb, ms := median(bare), median(boxed)
	b.ReportMetric(float64(mb.Microseconds()), "exec-µs")
	b.ReportMetric(float64(ms.Microseconds()), "sandbox-µs")
	b.ReportMetric(float64(ms)/float64(mb), "ratio")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
