package linux

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// HostInfo is what this host offers the sandbox. The zero value describes a
// host that offers nothing.
type HostInfo struct {
	// Kernel is the kernel release, e.g. "6.18.44".
	Kernel string
	// Arch is the machine architecture, e.g. "x86_64".
	Arch string
	// LandlockABI is the highest Landlock ABI, or 0 if Landlock is off.
	LandlockABI int
	// LandlockReason says why Landlock is unavailable, when it is.
	LandlockReason string
	// Seccomp reports whether seccomp filters can be installed.
	Seccomp bool
	// UserNS reports whether this process can create the sandbox's
	// namespaces (user, mount, pid, net, ipc, uts) and set them up. Probe
	// judges it from the kernel's settings; a sandbox whose helper is then
	// refused switches them off and records why (see UserNSReason).
	UserNS bool
	// UserNSReason says why not, when UserNS is false.
	UserNSReason string
	// Root reports whether moat runs with euid 0.
	Root bool
	// SocketGuard reports whether the kernel has what the socket guard
	// needs (seccomp user notification with a killable wait, pidfd_getfd,
	// thread pidfds, unix sock_diag); SocketGuardReason says why not.
	SocketGuard       bool
	SocketGuardReason string
}

var (
	probeOnce sync.Once
	probed    HostInfo

	nsMu     sync.Mutex
	nsFailed string // why the host refused namespaces, once seen
)

// Probe inspects the host once per process and caches the answer. It only
// reads kernel settings; [ProbeNamespaces] starts a helper to be sure.
func Probe() HostInfo {
	probeOnce.Do(func() { probed = probeHost() })
	h := probed
	nsMu.Lock()
	if nsFailed != "" {
		h.UserNS, h.UserNSReason = false, nsFailed
	}
	nsMu.Unlock()
	return h
}

// namespaceFailure says why the host refused namespaces, if it did.
func namespaceFailure() string {
	nsMu.Lock()
	defer nsMu.Unlock()
	return nsFailed
}

// markNamespacesUnavailable records, for the rest of the process, that the
// host refused the sandbox's namespaces.
func markNamespacesUnavailable(reason string) {
	nsMu.Lock()
	defer nsMu.Unlock()
	if nsFailed == "" {
		nsFailed = reason
	}
}

// ProbeNamespaces starts the helper in the full set of namespaces and has it
// mount what a sandbox mounts, to find out for sure (used by moat doctor).
func ProbeNamespaces() (bool, string) {
	ok, reason := probeNamespaces()
	if !ok {
		markNamespacesUnavailable(reason)
	}
	return ok, reason
}

func probeHost() HostInfo {
	var h HostInfo
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
		h.Arch = unix.ByteSliceToString(u.Machine[:])
	}
	h.Root = os.Geteuid() == 0
	abi, err := landlockABI()
	switch {
	case err != nil:
		h.LandlockReason = fmt.Sprintf("landlock_create_ruleset: %v", err)
	case abi < 1:
		h.LandlockReason = "kernel reports no Landlock ABI"
	default:
		h.LandlockABI = abi
	}
	// PR_GET_SECCOMP answers 0 when filters are available and we are not
	// yet filtered; EINVAL when the kernel lacks seccomp.
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		h.Seccomp = true
	}
	h.UserNS, h.UserNSReason = namespaceSettings(h.Root)
	h.SocketGuard, h.SocketGuardReason = probeSocketGuard()
	return h
}

// namespaceSettings reads the sysctls that switch unprivileged user
// namespaces off.
func namespaceSettings(root bool) (bool, string) {
	readInt := func(path string) (int, bool) {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		return n, err == nil
	}
	if n, ok := readInt("/proc/sys/user/max_user_namespaces"); ok && n == 0 {
		return false, "user.max_user_namespaces is 0"
	}
	if root {
		return true, ""
	}
	if n, ok := readInt("/proc/sys/kernel/unprivileged_userns_clone"); ok && n == 0 {
		return false, "kernel.unprivileged_userns_clone is 0"
	}
	if n, ok := readInt("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && n == 1 {
		return false, "kernel.apparmor_restrict_unprivileged_userns is 1"
	}
	return true, ""
}

// probeNamespaces starts the helper in its "probe" role inside the full set
// of namespaces and has it mount what a sandbox mounts.
func probeNamespaces() (bool, string) {
	self, err := os.Executable()
	if err != nil {
		return false, fmt.Sprintf("finding own executable: %v", err)
	}
	cmd := exec.Command(self)
	cmd.Path = "/proc/self/exe"
	cmd.Args = []string{"moat-helper-probe"}
	cmd.Env = []string{HelperEnv + "=probe"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = namespaceAttr(namespaceFlags)
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return false, msg
	}
	return true, ""
}

// namespaceFlags are the namespaces every sandbox gets when they work.
const namespaceFlags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
	syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP

// zygoteFlags are the namespaces a sandbox's zygote holds for all its
// commands; each command then gets a PID and mount namespace of its own.
const zygoteFlags = namespaceFlags &^ syscall.CLONE_NEWPID

// namespaceAttr maps the caller's uid and gid to themselves in a new user
// namespace with the given namespaces, and keeps, across the helper's
// execve, only the capabilities the helper needs to build the sandbox; it
// drops them before the command.
func namespaceAttr(flags uintptr) *syscall.SysProcAttr {
	uid, gid := os.Geteuid(), os.Getegid()
	return &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		// CAP_SYS_PTRACE, in the sandbox's own user namespace only, lets
		// the socket guard reach a command that made itself undumpable.
		// CAP_NET_BIND_SERVICE binds the DNS stub's port 53 there.
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_SYS_PTRACE, unix.CAP_NET_BIND_SERVICE},
		Setpgid:     true,
	}
}

// probeRole is the helper's "probe" role: mount what a sandbox mounts and
// bring up lo, then exit 0; any failure is printed and exits 1.
func probeRole() {
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		os.Exit(1)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail("make / private", err)
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755"); err != nil {
		fail("mount tmpfs", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fail("mount proc", err)
	}
	if err := unix.Mount("devpts", "/tmp", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, devptsOptions); err != nil {
		fail("mount devpts", err)
	}
	if err := bringUpLoopback(); err != nil {
		fail("network namespace", err)
	}
	os.Exit(0)
}
