package cli

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/backend/linux"
	"github.com/moat-sandbox/moat/internal/cgroup"
)

// landlockMinKernel is the first Linux release with Landlock.
const landlockMinKernel = "5.13"

// probeHost fills in what Linux offers: Landlock, seccomp, user namespaces
// and cgroups, each with a fix when it is missing.
func probeHost() doctorReport {
	h := linux.Probe()
	// The kernel's settings only suggest that namespaces work; start a
	// helper in them to be sure (this also makes the report below exact).
	h.UserNS, h.UserNSReason = linux.ProbeNamespaces()
	r := doctorReport{Kernel: h.Kernel, Machine: h.Arch, Root: h.Root}

	r.Landlock.ABI = h.LandlockABI
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
		r.Seccomp.Fix = "use a kernel built with CONFIG_SECCOMP_FILTER=y, and do not run moat under a seccomp profile that forbids installing filters"
	}

	r.UserNamespaces.Available = h.UserNS
	if !h.UserNS {
		r.UserNamespaces.Detail = h.UserNSReason
		r.UserNamespaces.Fix = userNSFix(h.Root, readSysFile)
	}

	r.Cgroup = cgroupReport(cgroup.Probe(), h.Root)
	return r
}

// landlockFix says how to turn Landlock on, given the kernel release and
// the active LSM list from /sys/kernel/security/lsm.
func landlockFix(kernel, lsms string) string {
	if kernelBefore(kernel, landlockMinKernel) {
		return "upgrade to Linux " + landlockMinKernel + " or later (6.7 or later for every Landlock feature moat uses)"
	}
	if lsms != "" && !slices.Contains(strings.Split(lsms, ","), "landlock") {
		return "add landlock to the active LSMs: boot with lsm=" + lsms + ",landlock"
	}
	return "use a kernel built with CONFIG_SECURITY_LANDLOCK=y and boot it with landlock in lsm=... (e.g. lsm=landlock,lockdown,yama,integrity,apparmor,bpf)"
}

// userNSFix says how to allow user namespaces, naming the sysctl that
// forbids them when one does; read returns a sysctl file's content or "".
func userNSFix(root bool, read func(string) string) string {
	var fixes []string
	if !root && read("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		fixes = append(fixes, "sysctl -w kernel.unprivileged_userns_clone=1")
	}
	if !root && read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
		fixes = append(fixes, "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile for moat that allows userns)")
	}
	if read("/proc/sys/user/max_user_namespaces") == "0" {
		fixes = append(fixes, "sysctl -w user.max_user_namespaces=15000 (any value > 0)")
	}
	if len(fixes) > 0 {
		return strings.Join(fixes, "; ")
	}
	return "allow user namespaces: sysctl kernel.unprivileged_userns_clone=1, kernel.apparmor_restrict_unprivileged_userns=0, user.max_user_namespaces > 0; " +
		"in a container, its seccomp or AppArmor profile may forbid unshare and mount (e.g. docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined)"
}

// cgroupReport converts cgroup.Probe's answer and adds a fix.
func cgroupReport(info cgroup.Info, root bool) cgroupCheck {
	c := cgroupCheck{
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
	switch {
	case info.V2Mount == "" && len(info.V1) == 0:
		c.Fix = "mount cgroup2 at /sys/fs/cgroup"
	case !info.Writable && root:
		c.Fix = "make the cgroup hierarchy writable (in a container: a private cgroup namespace with /sys/fs/cgroup mounted read-write)"
	case !info.Writable:
		c.Fix = "run as root or delegate a cgroup to this user (e.g. systemd-run --user --scope -p Delegate=yes moat ...); meanwhile limits hold per process"
	}
	return c
}

// kernelBefore reports whether release (e.g. "5.10.0-23-amd64") is older
// than want ("major.minor"). An unreadable release is not older.
func kernelBefore(release, want string) bool {
	maj, minor, ok := majorMinor(release)
	wantMaj, wantMinor, _ := majorMinor(want)
	return ok && (maj < wantMaj || maj == wantMaj && minor < wantMinor)
}

// majorMinor parses the leading "major.minor" of a kernel release.
func majorMinor(release string) (int, int, bool) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(parts[0])
	digits := parts[1]
	if i := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		digits = digits[:i]
	}
	minor, err2 := strconv.Atoi(digits)
	return maj, minor, err1 == nil && err2 == nil
}

// readSysFile returns a small /proc or /sys file's trimmed content, or "".
func readSysFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
