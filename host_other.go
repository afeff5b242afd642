//go:build !linux

package moat

import "runtime"

// ProbeHost reports that the Linux layers (Landlock, seccomp, user
// namespaces, cgroups) do not exist on this OS, each feature absent with
// the reason; [New] and [Sandbox.Report] say what moat can do here.
func ProbeHost() HostReport {
	na := HostFeature{Detail: "Linux only; not on " + runtime.GOOS}
	return HostReport{
		Landlock:       na,
		Seccomp:        na,
		UserNamespaces: na,
		Cgroup:         CgroupReport{Reason: "Linux only; not on " + runtime.GOOS},
	}
}
