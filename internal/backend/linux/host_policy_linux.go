package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"
)

// systemExec are the read+execute baseline: where programs and libraries
// live. Missing ones are skipped.
var systemExec = hostview.SystemPathRoots

// systemRead are readable but not executable.
var systemRead = []string{
	"/etc", "/proc",
	"/sys/devices/system/cpu", "/sys/devices/system/node", "/sys/kernel/mm/transparent_hugepage",
	"/sys/fs/cgroup",
}

// devFiles are the harmless devices, read+write with ioctl.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// etcSecrets stay unreadable even to a sandbox running as root (whose
// capabilities are dropped but who still owns these files).
var etcSecrets = map[string]bool{
	"shadow": true, "shadow-": true, "gshadow": true, "gshadow-": true,
	"sudoers": true, "sudoers.d": true, "ssh": true, "ssl": false, "security": true,
	"subuid": false, "krb5.keytab": true, "libvirt": true, "NetworkManager": true,
	"wireguard": true, "ipsec.secrets": true, "ppp": true, "credstore": true, "credstore.encrypted": true,
}

func (e *Engine) buildBaseSpec() helperSpec {
	p := e.policy
	s := helperSpec{
		WorkDir:      p.WorkDir,
		ReadExec:     append([]string(nil), systemExec...),
		DevFiles:     append([]string(nil), devFiles...),
		NS:           e.ns,
		LandlockABI:  e.host.LandlockABI,
		DenyConnect:  !e.ns.Net && !p.HostNetwork,
		Scope:        true,
		AllowInetTCP: e.ns.Net || e.host.LandlockABI >= 4,
		Nice:         p.Nice,
		IOPriority:   p.IOPriority,
		MemoryBytes:  p.Limits.MemoryBytes,
		ProxyPort:    p.Network.ProxyPort,
	}
	if !e.ns.Net && e.host.LandlockABI >= 4 {
		// On the host's network stack (host network, or no network
		// namespace) a command could connect to a listed port, or bind
		// it on another loopback address; off the host's network the
		// filesystem ruleset already allows connecting to the proxy's
		// port only, and this layer adds the bind. Without Landlock's
		// TCP rules assess reports what is missing (on the host's
		// network) or seccomp denies every IP socket (off it).
		s.DenyTCPPorts = p.Network.DenyTCPPorts
	}
	e.etcHidden = nil
	if e.host.Root {
		e.etcHidden = etcHidden() // one scan, for the rules and the masks
	}
	for _, r := range systemRead {
		if r == "/etc" && e.host.Root && !e.ns.Mount {
			s.ReadOnly = append(s.ReadOnly, etcWithoutSecrets(e.etcHidden)...)
			continue
		}
		s.ReadOnly = append(s.ReadOnly, r)
	}
	if e.ns.Mount {
		s.ReadOnly = append(s.ReadOnly, "/dev")
		s.DevFiles = append(s.DevFiles, "/dev/pts", "/dev/ptmx")
		s.ReadWrite = append(s.ReadWrite, "/dev/shm")
	}
	for _, g := range p.Grants {
		s.Grants = append(s.Grants, g.Path)
		if g.Dev != 0 || g.Ino != 0 {
			if s.Identity == nil {
				s.Identity = map[string]fileID{}
			}
			s.Identity[g.Path] = fileID{Dev: g.Dev, Ino: g.Ino}
		}
		switch {
		case g.Write && g.Exec:
			s.WriteExec = append(s.WriteExec, g.Path)
		case g.Write:
			s.ReadWrite = append(s.ReadWrite, g.Path)
		case g.Exec:
			s.ReadExec = append(s.ReadExec, g.Path)
		default:
			s.ReadOnly = append(s.ReadOnly, g.Path)
		}
	}
	if p.ExecWorkDir {
		s.WriteExec = append(s.WriteExec, p.WorkDir)
	}
	s.WriteExec = append(s.WriteExec, p.Scratch...)
	e.applyLevel(&s)
	e.applyFS(&s)                 // host_fspolicy_linux.go
	e.keepPrivateTempWritable(&s) // host_privatetemp_linux.go
	s.Rlimits = e.rlimits()
	return s
}

// applyLevel adds what the isolation level, the protections and AllowGPU
// expose or hide.
func (e *Engine) applyLevel(s *helperSpec) {
	p := e.policy
	// Shared temp was listed and checked at New, just before the first
	// configuration; a later one (after a namespace fallback) checks the
	// list again.
	sharedTemp := p.View.SharedTemp
	if e.gen > 1 {
		sharedTemp = hostview.StillShared(sharedTemp)
	}
	e.applyPrivate(s) // host_level_linux.go
	switch p.Level {
	case spec.LevelDefault:
		s.TempRead = sharedTemp
		s.ListOnly = append(s.ListOnly, hostview.SharedTempDirs...)
		if e.ns.Mount && p.View.Home != "" {
			// Only the chosen entries exist there.
			s.ListOnly = append(s.ListOnly, p.View.Home)
		}
	case spec.LevelPermissive:
		s.Permissive = true
		for _, d := range hostview.SharedTempDirs {
			s.Carve = append(s.Carve, carveRule{Path: d, Keep: tempKeep})
		}
		if e.ns.Mount {
			// Shown inside the private /tmp, as at the default level.
			s.TempRead = sharedTemp
		}
		// Devices stay the allow-list below, at every level.
		s.Carve = append(s.Carve, carveRule{Path: "/dev"})
		if !e.ns.Mount {
			s.ReadWrite = append(s.ReadWrite, "/dev/shm")
		}
	}
	// The home's curated entries hold toolchains: readable and
	// executable, never writable.
	s.ReadExec = append(s.ReadExec, p.View.HomeRead...)
	hide := p.View.Protected
	if p.View.HideHome != "" {
		hide = append([]string{p.View.HideHome}, hide...)
	}
	for _, h := range hide {
		s.Carve = append(s.Carve, carveRule{Path: h})
		if e.ns.Mount {
			s.MaskFiles = append(s.MaskFiles, h)
		}
	}
	if e.host.Root {
		// The named secrets and every /etc entry others may not read
		// (host_etcscan_linux.go): masked, and carved out of the rules.
		for _, p := range e.etcHidden {
			s.Carve = append(s.Carve, carveRule{Path: p})
			if e.ns.Mount {
				s.MaskFiles = append(s.MaskFiles, p)
			}
		}
	}
	if p.AllowGPU {
		s.DevFiles = append(s.DevFiles, gpuPaths()...)
		s.ReadOnly = append(s.ReadOnly, gpuDriverFiles...)
	}
	e.applyDeviceClasses(s) // host_devices_linux.go: AllowNPU, AllowHardware
	if e.ns.Mount && e.control != nil {
		s.ControlRO = e.control.readOnly
		s.ControlPins = e.control.pins
	}
}

// etcWithoutSecrets lists /etc's entries except the secrets and hidden
// (etcHidden's answer), for hosts where no mount namespace can hide
// them (deeper ones are carved out of these rules).
func etcWithoutSecrets(hidden []string) []string {
	entries, err := os.ReadDir("/etc")
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(entries))
	for _, ent := range entries {
		if !etcSecrets[ent.Name()] && !slices.Contains(hidden, filepath.Join("/etc", ent.Name())) {
			out = append(out, filepath.Join("/etc", ent.Name()))
		}
	}
	return out
}

// The sandbox's share of two per-user kernel budgets, below the host's
// defaults so that the host user keeps the rest: queued signals (about one
// per 256 KiB of RAM by default) and POSIX message queue bytes (819,200).
const (
	sandboxSigPending    = 4096
	sandboxMsgQueueBytes = 256 << 10
)

func (e *Engine) rlimits() []rlimit {
	l := e.policy.Limits
	var out []rlimit
	add := func(res int, v int64) {
		if v > 0 {
			out = append(out, rlimit{Resource: res, Value: uint64(v)})
		}
	}
	add(unix.RLIMIT_DATA, l.MemoryBytes)
	if l.CPUSeconds > 0 {
		// SIGXCPU at the limit, which moat reports as a CPU-time kill;
		// SIGKILL a second later for a process that catches it.
		out = append(out, rlimit{Resource: unix.RLIMIT_CPU, Value: uint64(l.CPUSeconds), Hard: uint64(l.CPUSeconds) + 1})
	}
	add(unix.RLIMIT_FSIZE, l.FileSizeBytes)
	add(unix.RLIMIT_NOFILE, l.OpenFiles)
	if e.ns.User {
		// Counted per user namespace: what the sandbox may take of the
		// host user's queued signals (sigqueue, POSIX timers) and POSIX
		// message queue bytes, which the host user's own processes share.
		add(unix.RLIMIT_SIGPENDING, sandboxSigPending)
		add(unix.RLIMIT_MSGQUEUE, sandboxMsgQueueBytes)
	}
	switch {
	case l.Processes <= 0:
	case e.ns.User && !e.host.Root:
		// Counted per user namespace: binds this sandbox only.
		add(unix.RLIMIT_NPROC, l.Processes)
	case !e.host.Root:
		// Counted per user across the host: allow what the user already
		// runs plus the sandbox's share.
		add(unix.RLIMIT_NPROC, l.Processes+int64(userProcesses(os.Getuid())))
	}
	return out
}

// userProcesses is countUserProcesses; the golden plans
// (plan_golden_linux_test.go) set a fixed count in its place.
var userProcesses = countUserProcesses

// countUserProcesses counts the threads owned by uid, which RLIMIT_NPROC
// counts.
func countUserProcesses(uid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, ent := range entries {
		if _, err := strconv.Atoi(ent.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + ent.Name() + "/status")
		if err != nil {
			continue
		}
		var owner, threads int = -1, 1
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "Uid:" {
				owner, _ = strconv.Atoi(f[1])
			}
			if len(f) >= 2 && f[0] == "Threads:" {
				threads, _ = strconv.Atoi(f[1])
			}
		}
		if owner == uid {
			n += threads
		}
	}
	return n
}

// assess lists the layers and what strict enforcement lacks.
func (e *Engine) assess() (layers []spec.Layer, missing []string) {
	h := e.host
	ll := spec.Layer{Name: "landlock", Active: h.LandlockABI >= 1}
	if ll.Active {
		ll.Detail = fmt.Sprintf("ABI %d: filesystem allow-list, working directory not executable", h.LandlockABI)
		if e.policy.ExecWorkDir {
			ll.Detail = fmt.Sprintf("ABI %d: filesystem allow-list, working directory executable (build mode)", h.LandlockABI)
		}
	} else {
		ll.Detail = h.LandlockReason
		missing = append(missing, "landlock: "+h.LandlockReason)
	}
	layers = append(layers, ll)

	net := spec.Layer{Name: "network"}
	switch {
	case e.policy.HostNetwork:
		// Chosen explicitly (moat.HostNetwork): not a missing layer.
		net.Detail = "host (not isolated): no network namespace and no proxy; every connection the host can make is allowed, none is audited"
		if h.Seccomp {
			net.Detail += "; seccomp still refuses UDP, raw, MPTCP and Fast Open sockets"
		}
	case e.ns.Net && e.policy.Network.ProxyPort > 0:
		net.Active, net.Detail = true, fmt.Sprintf("network namespace with only lo; the policy proxy listens on 127.0.0.1:%d inside it and is the only way out; a DNS stub answers direct lookups \"no such name\" and lists them", e.policy.Network.ProxyPort)
	case e.policy.Network.ProxyPort > 0 && h.LandlockABI >= 4 && h.Seccomp:
		net.Active, net.Detail = true, fmt.Sprintf("Landlock allows TCP connect to port %d only (the policy proxy on the host's loopback, which asks every client for the sandbox's credential; the port is open on any address); seccomp denies UDP, raw, MPTCP and Fast Open", e.policy.Network.ProxyPort)
	case e.ns.Net:
		net.Active, net.Detail = true, "network namespace with only lo; a DNS stub answers every lookup \"no such name\" at once and lists the names"
	case h.LandlockABI >= 4 && h.Seccomp:
		net.Active, net.Detail = true, "Landlock denies TCP connect; seccomp denies UDP, raw, MPTCP and Fast Open"
	case h.Seccomp:
		net.Active, net.Detail = true, "seccomp denies every IP socket"
	default:
		net.Detail = "no network namespace, Landlock TCP rules or seccomp"
		missing = append(missing, "network: "+net.Detail)
	}
	layers = append(layers, net)
	if ports := e.policy.Network.DenyTCPPorts; len(ports) > 0 {
		layers, missing = e.portDenyLayer(layers, missing, ports)
	}

	scope := spec.Layer{Name: "landlock-scope", Active: h.LandlockABI >= 6}
	if scope.Active {
		scope.Detail = "abstract Unix sockets and signals limited to the sandbox"
	} else {
		scope.Detail = "needs Landlock ABI 6"
		e.gaps = append(e.gaps, "signals to host processes of the same user are not blocked by Landlock")
	}
	layers = append(layers, scope)

	sc := spec.Layer{Name: "seccomp", Active: h.Seccomp}
	if sc.Active {
		sc.Detail = "denies ptrace, bpf, io_uring, mount, namespaces, keyrings, TIOCSTI and foreign syscall ABIs"
	} else {
		sc.Detail = "kernel has no seccomp filters"
		missing = append(missing, "seccomp: kernel has no seccomp filters")
	}
	layers = append(layers, sc)

	ns := spec.Layer{Name: "namespaces", Active: e.ns.User}
	if ns.Active {
		ns.Detail = "user, mount, pid, net, ipc, uts, cgroup; an init as PID 1; private /tmp, /run and /dev/shm; minimal /dev; noexec working directory"
		if e.policy.ExecWorkDir {
			ns.Detail = strings.TrimSuffix(ns.Detail, "noexec working directory") + "working directory executable (build mode)"
		}
	} else {
		ns.Detail = h.UserNSReason
		e.gaps = append(e.gaps,
			"no PID namespace: a descendant that leaves the process group can outlive a SIGKILL of moat",
			"no mount namespace: host Unix sockets reachable by path (e.g. in /tmp) can be connected to",
			"no mount namespace: a written file can still be mapped executable (dynamic loader)")
	}
	layers = append(layers, ns)

	layers = append(layers, e.isolationLayer(), e.protectionLayer())
	if detail, active, ok := e.fsLayer(); ok { // host_fspolicy_linux.go
		layers = append(layers, spec.Layer{Name: "filesystem-policy", Active: active, Detail: detail})
		m, g := e.fsMissing()
		missing, e.gaps = append(missing, m...), append(e.gaps, g...)
	}

	if places := e.policy.WritablePlaces(); len(places) > 0 {
		cp := spec.Layer{Name: "control-paths", Active: e.ns.Mount && e.control != nil}
		// Read-only binds keep what exists unchanged during the run; what
		// the run creates (a repository, a commondir) no kernel mechanism
		// stops, so Close moves it aside and reports it (internal/gitguard).
		// That check also runs without a mount namespace, but then the
		// existing hooks and config can be changed during the run, and a
		// host git that runs meanwhile (an editor, a prompt) would run
		// them: the layer is missing.
		switch {
		case cp.Active:
			cp.Detail = "git hooks/, config, config.worktree, commondir, info/, gitdir pointers, included config files, and .moat-*, .heimdall-*, .agents and .pi, read-only in the working directory and writable grants; repositories and git control files the run creates are moved aside at Close and reported"
			if len(e.control.links) > 0 {
				cp.Detail += fmt.Sprintf("; %s is a symbolic link, which a mount cannot pin: a repository put in its place is moved aside at Close", e.control.links[0])
			}
		default:
			cp.Detail = "needs a mount namespace: without one the run can change existing git hooks and config; Close moves every change aside, restores the originals and reports them, but a host git that runs in the repository during the run would run them"
			missing = append(missing, "control paths: keeping existing git hooks and config read-only during the run needs a mount namespace (Close still moves aside and reports what the run created or changed)")
		}
		layers = append(layers, cp)
	}

	layers = append(layers,
		spec.Layer{Name: "no-new-privs", Active: true, Detail: "all capabilities dropped"},
		spec.Layer{Name: "rlimits", Active: true, Detail: e.rlimitDetail()},
	)
	cg := spec.Layer{Name: "cgroup", Active: e.cg != nil}
	if e.cg != nil {
		var parts []string
		for k, v := range e.cg.Enforced() {
			parts = append(parts, k+" ("+v+")")
		}
		slices.Sort(parts)
		cg.Detail = strings.Join(parts, ", ")
	} else {
		cg.Detail = "needs root or a delegated cgroup v2 subtree with the memory controller"
		if e.cgReason != "" {
			cg.Detail += " (" + e.cgReason + ")"
		}
		if e.ns.User && e.policy.Limits.MemoryBytes > 0 {
			cg.Detail += "; the sandbox's init adds up its resident memory, SysV and POSIX shared memory and socket buffers, and its IPC namespace's limits fit SysV objects to the memory limit"
		} else {
			cg.Detail += "; memory is bounded per process"
		}
	}
	layers = append(layers, cg)
	return layers, missing
}

func (e *Engine) rlimitDetail() string {
	switch {
	case e.ns.User && !e.host.Root:
		return "per process; process count per sandbox (own user namespace); memory of the whole sandbox watched by its init"
	case e.host.Root && e.cg != nil:
		return "per process; process count by cgroup"
	case e.host.Root:
		e.gaps = append(e.gaps, "running as root without cgroups: no process-count limit")
		return "per process; no process-count limit for root without cgroups"
	default:
		e.gaps = append(e.gaps, "no user namespace: the process limit counts all of the user's processes")
		return "per process; process count per user"
	}
}

// isolationLayer describes what the level exposes.
func (e *Engine) isolationLayer() spec.Layer {
	p := e.policy
	l := spec.Layer{Name: "isolation", Active: true}
	switch p.Level {
	case spec.LevelDefault:
		l.Detail = fmt.Sprintf("default: system files, shared temp's readable regular files read-only (never a directory, link or socket), %d toolchain paths from the home read-only; a private /tmp and home", len(p.View.HomeRead))
	case spec.LevelPermissive:
		l.Detail = "permissive: everything readable and writable except protected paths; nothing executes from shared temp; write-xor-execute given up"
	default:
		l.Detail = "strict: system files only, besides the working directory and grants"
	}
	return l
}

// protectionLayer says which mechanism keeps protected paths unreadable.
func (e *Engine) protectionLayer() spec.Layer {
	p := e.policy
	n := len(p.View.Protected)
	l := spec.Layer{Name: "protections", Active: e.host.LandlockABI >= 1 || e.ns.Mount}
	switch {
	case e.ns.Mount && e.host.LandlockABI >= 1:
		l.Detail = fmt.Sprintf("%d protected paths: masked in the mount namespace, and Landlock rules carved around them, so ones created later stay unreadable", n)
	case e.host.LandlockABI >= 1:
		l.Detail = fmt.Sprintf("%d protected paths: Landlock rules carved around them (their siblings enumerated at start; directories on the way keep only listing)", n)
	case e.ns.Mount:
		l.Detail = fmt.Sprintf("%d protected paths masked in the mount namespace; ones created later are not covered", n)
	default:
		l.Detail = "no Landlock and no mount namespace"
	}
	return l
}
