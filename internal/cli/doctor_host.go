package cli

import "github.com/moat-sandbox/moat"

// hostChecks is the host part of doctor's report: moat.ProbeHost's answer
// in the report's stable JSON shape. The conversions keep the two in step:
// a field moat adds or renames stops this from compiling until the report
// follows.
func hostChecks(h moat.HostReport) doctorReport {
	return doctorReport{
		Kernel:         h.Kernel,
		Machine:        h.Machine,
		Root:           h.Root,
		Landlock:       landlockCheck{check: check(h.Landlock), ABI: h.LandlockABI},
		Seccomp:        check(h.Seccomp),
		UserNamespaces: check(h.UserNamespaces),
		Cgroup:         cgroupCheck(h.Cgroup),
	}
}
