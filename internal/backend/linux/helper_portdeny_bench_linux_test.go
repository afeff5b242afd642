package linux

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkPortDenyEnforce is what the port deny layer costs a command
// that takes it on a thread of its own (on a terminal, under HideProc, or
// with the socket guard): landlock_restrict_self with the layer of one
// denied port, handling TCP connect only (the layer before it denied bind)
// and connect and bind (portDenyAccess), one of each per iteration on a
// fresh thread, and reports the median of each and their ratio. Both hold
// one rule for each of the other 65,535 ports, so bind should cost
// nothing more.
func BenchmarkPortDenyEnforce(b *testing.B) {
	abi, err := landlockABI()
	if err != nil || abi < 4 {
		b.Skipf("SKIPPING: needs Landlock ABI 4 for TCP rules, the kernel has %d (%v)", abi, err)
	}
	build := func(access uint64) *ruleset {
		rs, err := buildPortRules([]uint16{7999}, access)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(rs.close)
		return rs
	}
	connectOnly, both := build(unix.LANDLOCK_ACCESS_NET_CONNECT_TCP), build(portDenyAccess)
	enforce := func(rs *ruleset) time.Duration {
		took := make(chan time.Duration, 1)
		fail := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with its domain
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				fail <- err
				return
			}
			t0 := time.Now()
			if err := rs.restrictThread(); err != nil {
				fail <- err
				return
			}
			took <- time.Since(t0)
		}()
		select {
		case d := <-took:
			return d
		case err := <-fail:
			b.Fatal(err)
			return 0
		}
	}
	var connect, bind []time.Duration
	for b.Loop() {
		connect, bind = append(connect, enforce(connectOnly)), append(bind, enforce(both))
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	mc, mb := med(connect), med(bind)
	b.ReportMetric(float64(mc.Microseconds()), "connect-µs")
	b.ReportMetric(float64(mb.Microseconds()), "connect+bind-µs")
	b.ReportMetric(float64(mb)/float64(mc), "ratio")
}
