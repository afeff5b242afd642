package cli

import "github.com/moat-sandbox/moat/internal/hostprobe"

// hostChecks is the host part of doctor's report: hostprobe.Probe's answer
// in the report's stable JSON shape. The conversions keep the two in step:
// a field moat adds or renames stops this from compiling until the report
// follows.
func hostChecks(h hostprobe.Report) doctorReport {
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
