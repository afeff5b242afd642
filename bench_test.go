//go:build linux

package moat_test

import (
	"os/exec"
	"testing"

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
