//go:build !linux

package hostprobe

import "runtime"

// Probe reports that the Linux layers (Landlock, seccomp, user
// namespaces, cgroups) do not exist on this OS, each feature absent with
// the reason; moat.New and Sandbox.Report say what moat can do here.
func Probe() Report {
	na := Feature{Detail: "Linux only; not on " + runtime.GOOS}
	return Report{
		Landlock:       na,
		Seccomp:        na,
		UserNamespaces: na,
		Cgroup:         Cgroups{Reason: "Linux only; not on " + runtime.GOOS},
	}
}
