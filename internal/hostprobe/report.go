package hostprobe

import (
	"slices"
	"strconv"
	"strings"
)

// Report is what this host offers a sandbox, whatever its moat.Config: the
// kernel, each host feature moat's layers are built on, and the cgroup
// hierarchies, each missing one with a fix. [Probe] makes one; moat
// doctor prints it. The zero value describes a host that offers nothing
// and says nothing about it.
type Report struct {
	// Kernel is the kernel release and Machine its architecture, as
	// uname -r and uname -m print them; "" where there is none to read.
	Kernel, Machine string
	// Root reports whether moat runs with effective user ID 0.
	Root bool

	// Landlock is the Landlock LSM; LandlockABI its highest ABI version,
	// 0 when it is off.
	Landlock    Feature
	LandlockABI int
	// Seccomp is whether seccomp filters can be installed.
	Seccomp Feature
	// UserNamespaces is whether this process can create the sandbox's
	// namespaces and set them up, found by trying.
	UserNamespaces Feature
	// Cgroup is what the cgroup hierarchies offer this process.
	Cgroup Cgroups
}

// Feature is one host feature: whether it is there, what was found, and
// how to get it when it is not. The zero value is a feature that is absent,
// with nothing found and no fix known.
type Feature struct {
	// Available reports whether the feature works here.
	Available bool
	// Detail says what was found ("ABI 7") or why it is missing; "" when
	// there is nothing to add.
	Detail string
	// Fix says how to get the feature; "" when it is available or moat
	// knows no fix.
	Fix string
}

// Cgroups is what the cgroup hierarchies offer this process, and how
// to get limits enforced by the kernel when they do not. The zero value is
// a host with no cgroup hierarchy, no fix given.
type Cgroups struct {
	// V2Mount is the mount point of the cgroup v2 hierarchy; "" if none.
	V2Mount string
	// V2Controllers lists the controllers bound to it; nil if none.
	V2Controllers []string
	// V1Controllers maps each cgroup v1 controller (and named hierarchy)
	// to its mount point; nil if none.
	V1Controllers map[string]string
	// Memory, Pids and CPU name the hierarchy ("v2", "v1") that would
	// hold that limit, "" if none; Kill how a group would be killed
	// ("v2", "v2-freeze", "v1-freezer", "signal"), "" if unknown.
	Memory, Pids, CPU, Kill string
	// Delegated is the delegated cgroup v2 subtree a user who is not root
	// would use; "" for root or when there is none.
	Delegated string
	// Writable reports whether a group could be made in every hierarchy
	// a limited sandbox would use.
	Writable bool
	// Reason says why not, when Writable is false.
	Reason string
	// Fix says how to get kernel-enforced limits; "" when they work or no
	// fix is known.
	Fix string
}

// landlockMinKernel is the first Linux release with Landlock.
const landlockMinKernel = "5.13"

// Fix says how to get piece, a missing layer (a moat.UnsupportedError's
// Missing entry) or a gap (a moat.Report's Gaps entry) as moat words them,
// from what the host lacks; "" when moat knows no fix.
func (h Report) Fix(piece string) string {
	userNS := h.UserNamespaces.Fix
	if userNS == "" {
		userNS = "allow user namespaces on this host"
	}
	switch {
	case strings.HasPrefix(piece, "landlock"):
		return orFix(h.Landlock.Fix, "use Linux 6.7 or later with Landlock enabled")
	case strings.HasPrefix(piece, "seccomp"):
		return orFix(h.Seccomp.Fix, "use a kernel built with CONFIG_SECCOMP_FILTER=y")
	case strings.HasPrefix(piece, "network"):
		return userNS + "; or use Linux 6.7 or later, whose Landlock (ABI 4) refuses TCP connect"
	case strings.HasPrefix(piece, "control paths") && strings.Contains(piece, "symbolic link"):
		return "name the directory the link points to instead (in --workdir or --grant)"
	case strings.HasPrefix(piece, "control paths"), strings.HasPrefix(piece, "no PID namespace"), strings.HasPrefix(piece, "no mount namespace"):
		return userNS
	case strings.HasPrefix(piece, "signals"):
		return "use Linux 6.12 or later (Landlock ABI 6 scopes signals and abstract sockets)"
	}
	return ""
}

// orFix returns fix, or def when fix is empty.
func orFix(fix, def string) string {
	if fix == "" {
		return def
	}
	return fix
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

// seccompFix says how to get seccomp filters.
const seccompFix = "use a kernel built with CONFIG_SECCOMP_FILTER=y, and do not run moat under a seccomp profile that forbids installing filters"

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

// cgroupFix says how to get kernel-enforced limits from the hierarchies c
// describes, for a process that is root or not; "" when they work.
func cgroupFix(c Cgroups, root bool) string {
	switch {
	case c.V2Mount == "" && len(c.V1Controllers) == 0:
		return "mount cgroup2 at /sys/fs/cgroup"
	case !c.Writable && root:
		return "make the cgroup hierarchy writable (in a container: a private cgroup namespace with /sys/fs/cgroup mounted read-write)"
	case !c.Writable:
		return "run as root or delegate a cgroup to this user (e.g. systemd-run --user --scope -p Delegate=yes moat ...); meanwhile limits hold per process"
	}
	return ""
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
