package darwin

import (
	"fmt"
	"strings"

	"github.com/moat-sandbox/moat/internal/spec"
)

// SandboxExec is the one sandbox-exec moat runs; a missing one is never
// looked for elsewhere.
const SandboxExec = "/usr/bin/sandbox-exec"

// facts are what the report depends on besides the policy.
type facts struct {
	sandboxExec bool // SandboxExec exists
	controlled  bool // the writable places' control paths were listed
}

// assess lists the layers, what strict enforcement lacks, and the gaps.
func assess(p *spec.Policy, f facts) (layers []spec.Layer, missing, gaps []string) {
	sb := spec.Layer{Name: "sandbox-exec (Seatbelt)", Active: f.sandboxExec}
	if f.sandboxExec {
		wx := "working directory writable, never executable"
		if p.ExecWorkDir {
			wx = "working directory writable and executable (build mode)"
		}
		sb.Detail = "deny-by-default SBPL profile: " + wx + "; nothing else writable but grants and the sandbox's own temp and home; nothing writable executable but rwx grants; devices, sysctls, Mach services and IOKit by name only"
	} else {
		sb.Detail = SandboxExec + " not found"
		missing = append(missing, "sandbox-exec: "+SandboxExec+" not found")
	}
	layers = append(layers, sb)

	net := spec.Layer{Name: "network", Active: f.sandboxExec}
	switch {
	case p.HostNetwork:
		net.Detail = "host network: every connection the host can make is allowed and none is audited"
	case p.Network.ProxyPort > 0:
		net.Detail = fmt.Sprintf("Seatbelt allows TCP to localhost:%d only, the policy proxy on the host's loopback (which asks every client for the sandbox's credential); direct DNS lookups are refused", p.Network.ProxyPort)
	default:
		net.Detail = "Seatbelt refuses every IP connection, loopback included, and DNS"
	}
	layers = append(layers, net)

	layers = append(layers,
		spec.Layer{Name: "namespaces", Detail: "macOS has none: the sandbox shares the host's process table and loopback"},
		spec.Layer{Name: "seccomp", Detail: "macOS has none; the profile's deny-by-default names the system services, sysctls and IOKit classes allowed instead"},
		isolationLayer(p),
		spec.Layer{Name: "protections", Active: f.sandboxExec, Detail: fmt.Sprintf("%d protected and %d denied paths refused under every name (/private and the data volume's firmlinks), with their hard links and clones", len(p.View.Protected), len(p.FS.Deny))},
	)
	if len(p.WritablePlaces()) > 0 {
		cp := spec.Layer{Name: "control-paths", Active: f.sandboxExec && f.controlled}
		cp.Detail = "git control paths and .moat-* entries that exist at start are read-only; repositories and git control files the run creates are moved aside at Close and reported"
		layers = append(layers, cp)
	}
	if len(p.FS.Virtual) > 0 {
		missing = append(missing, "virtual files: Seatbelt cannot show content that is not on the host (they need a mount namespace)")
	}
	if p.HostNetwork && len(p.Network.DenyTCPPorts) > 0 {
		// Off the host's network the profile allows the proxy's port
		// at most, so the ports are denied already.
		missing = append(missing, "deny tcp connect: the profile does not yet deny given ports on the host's network")
	}
	layers = append(layers, spec.Layer{Name: "rlimits", Active: true, Detail: "per process: CPU time, file size, open files, no core files; the process count is per user (all of the user's processes count)"})
	if p.Limits.MemoryBytes > 0 {
		// macOS enforces neither RLIMIT_AS nor RLIMIT_DATA on mapped
		// memory: moat watches the process group's footprint instead.
		layers = append(layers, spec.Layer{Name: "memory-watch", Active: true, Detail: fmt.Sprintf("moat adds up the physical footprint of each command's process group every %v and kills the group past the limit (macOS enforces no memory rlimit)", memoryInterval)})
		gaps = append(gaps, fmt.Sprintf("memory: a burst shorter than one %v check, and processes that leave the process group, escape the memory limit", memoryInterval))
	}
	if p.Nice > 0 || p.IOPriority > 0 {
		var parts []string
		if p.Nice > 0 {
			parts = append(parts, fmt.Sprintf("setpriority +%d", p.Nice))
		}
		if pol := ioPolicy(p.IOPriority); pol != 0 {
			parts = append(parts, map[int]string{iopolUtility: "disk I/O policy utility", iopolThrottle: "disk I/O policy throttle"}[pol])
		}
		layers = append(layers, spec.Layer{Name: "priority", Active: true, Detail: strings.Join(parts, ", ")})
	}
	layers = append(layers,
		spec.Layer{Name: "lifetime", Active: true, Detail: "each command leads its own process group, killed at Close, and by a watcher when moat exits or is killed"},
		spec.Layer{Name: "cgroup", Detail: "macOS has none"},
	)
	gaps = append(gaps,
		"no PID namespace: a descendant that leaves its process group survives Close and moat's exit",
		"the process limit counts all of the user's processes",
	)
	return layers, missing, gaps
}

// isolationLayer describes what the level shows.
func isolationLayer(p *spec.Policy) spec.Layer {
	l := spec.Layer{Name: "isolation", Active: true}
	switch p.Level {
	case spec.LevelDefault:
		l.Detail = fmt.Sprintf("default: system files, shared temp's readable regular files read-only, %d toolchain paths from the home read-only; /Users, /home, /Volumes, /Network and shared temp denied otherwise", len(p.View.HomeRead))
	case spec.LevelPermissive:
		l.Detail = "permissive: everything readable and writable except protected paths; nothing executes from shared temp; write-xor-execute given up"
	default:
		l.Detail = "strict: system files only, besides the working directory and grants; /Users, /home, /Volumes, /Network and shared temp denied"
	}
	return l
}
