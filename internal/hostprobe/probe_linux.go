package hostprobe

import (
	"fmt"
	"os"
	"strings"

	"github.com/moat-sandbox/moat/internal/backend/linux"
	"github.com/moat-sandbox/moat/internal/cgroup"
)

// Probe inspects what this host offers a sandbox: Landlock, seccomp,
// user namespaces and cgroups, each with a fix when it is missing. It
// starts a helper in the sandbox's namespaces to be sure they work, and
// tries a scratch cgroup; a host that refuses the namespaces is
// remembered, so later sandboxes of this process run without them.
func Probe() Report {
	h := linux.Probe()
	// The kernel's settings only suggest that namespaces work; start a
	// helper in them to be sure (this also makes the report below exact).
	h.UserNS, h.UserNSReason = linux.ProbeNamespaces()
	r := Report{Kernel: h.Kernel, Machine: h.Arch, Root: h.Root}

	r.LandlockABI = h.LandlockABI
	if h.LandlockABI > 0 {
		r.Landlock.Available = true
		r.Landlock.Detail = fmt.Sprintf("ABI %d", h.LandlockABI)
	} else {
		r.Landlock.Detail = h.LandlockReason
		r.Landlock.Fix = landlockFix(h.Kernel, readSysFile("/sys/kernel/security/lsm"))
	}

	r.Seccomp.Available = h.Seccomp
	if !h.Seccomp {
		r.Seccomp.Detail = "prctl(PR_GET_SECCOMP) failed"
		r.Seccomp.Fix = seccompFix
	}

	r.UserNamespaces.Available = h.UserNS
	if !h.UserNS {
		r.UserNamespaces.Detail = h.UserNSReason
		r.UserNamespaces.Fix = userNSFix(h.Root, readSysFile)
	}

	r.Cgroup = cgroupReport(cgroup.Probe(), h.Root)
	return r
}

// cgroupReport converts cgroup.Probe's answer and adds its fix.
func cgroupReport(info cgroup.Info, root bool) Cgroups {
	c := Cgroups{
		V2Mount:       info.V2Mount,
		V2Controllers: info.V2Controllers,
		V1Controllers: info.V1,
		Memory:        info.Memory,
		Pids:          info.Pids,
		CPU:           info.CPU,
		Kill:          info.Kill,
		Writable:      info.Writable,
		Delegated:     info.Delegated,
		Reason:        info.Reason,
	}
	c.Fix = cgroupFix(c, root)
	return c
}

// readSysFile returns a small /proc or /sys file's trimmed content, or "".
func readSysFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
