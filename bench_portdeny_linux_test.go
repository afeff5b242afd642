//go:build linux

package moat_test

import (
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// BenchmarkDenyTCPConnect is a warm sandbox's Command("/bin/true").Run()
// on the host's network, with and without Config.DenyTCPConnect (one
// port denied: a Landlock layer of 65,534 port rules), one of each per
// iteration, and reports the median of each, their difference (what the
// layer costs a command) and their ratio.
func BenchmarkDenyTCPConnect(b *testing.B) {
	plain := newSandbox(b, moat.Config{Network: moat.HostNetwork()})
	denying := newSandbox(b, moat.Config{Network: moat.HostNetwork(), DenyTCPConnect: []uint16{7999}})
	var without, with []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := plain.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := denying.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		without, with = append(without, t1.Sub(t0)), append(with, time.Since(t1))
	}
	mw, md := median(without), median(with)
	b.ReportMetric(float64(mw.Microseconds()), "plain-µs")
	b.ReportMetric(float64(md.Microseconds()), "deny-µs")
	b.ReportMetric(float64((md - mw).Microseconds()), "layer-µs/command")
	b.ReportMetric(float64(md)/float64(mw), "ratio")
}
