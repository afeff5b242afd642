//go:build !linux

package cli

import "runtime"

// probeHost reports that the Linux layers do not exist on this OS; the
// sandbox checks in diagnose say what moat can do here.
func probeHost() doctorReport {
	na := check{Detail: "Linux only; not on " + runtime.GOOS}
	return doctorReport{
		Landlock:       landlockCheck{check: na},
		Seccomp:        na,
		UserNamespaces: na,
		Cgroup:         cgroupCheck{Reason: "Linux only; not on " + runtime.GOOS},
	}
}
