package linux

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat/internal/seccomp"
	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"
)

// The host's side of the socket guard: whether the kernel can hold it, the
// spec and report entries, and the refusals it collected.

// probeSocketGuard checks, without installing anything, every kernel
// interface the socket guard uses.
func probeSocketGuard() (bool, string) {
	if _, ok := seccomp.NativeArch(); !ok {
		return false, "no seccomp filter for this architecture"
	}
	if !seccomp.ListenerSupported() {
		return false, "the kernel lacks seccomp user notification with a killable wait (Linux 5.19)"
	}
	if _, err := unix.PidfdGetfd(-1, 0, 0); err != unix.EBADF {
		return false, fmt.Sprintf("pidfd_getfd: %v (Linux 5.6)", err)
	}
	runtime.LockOSThread()
	fd, err := unix.PidfdOpen(unix.Gettid(), pidfdThread)
	runtime.UnlockOSThread()
	if err != nil {
		return false, fmt.Sprintf("pidfd_open(PIDFD_THREAD): %v (Linux 6.9)", err)
	}
	unix.Close(fd)
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Sprintf("socket: %v", err)
	}
	_, err = netnsCookie(s)
	unix.Close(s)
	if err != nil {
		return false, fmt.Sprintf("SO_NETNS_COOKIE: %v (Linux 5.14)", err)
	}
	if _, err := boundUnixSockets(); err != nil {
		return false, err.Error() + " (CONFIG_UNIX_DIAG)"
	}
	return true, ""
}

// guardsSockets reports whether this engine's commands run under the
// socket guard: it needs the sandbox's network namespace (where its own
// sockets are told from the host's) and mount namespace, and the kernel's
// support.
func (e *Engine) guardsSockets() bool {
	return e.ns.Net && e.ns.Mount && e.host.SocketGuard
}

// applySocketGuard adds the guard and the granted sockets to spec s. A
// granted socket is also made visible, read-only, like a file grant.
func (e *Engine) applySocketGuard(s *helperSpec) {
	s.SuperviseSockets = e.guardsSockets()
	for _, g := range e.policy.Sockets {
		id := fileID{Dev: g.Dev, Ino: g.Ino}
		s.SocketGrants = append(s.SocketGrants, id)
		if visible(&e.policy, g.Path) {
			continue // bound with what holds it
		}
		s.Grants = append(s.Grants, g.Path)
		s.ReadOnly = append(s.ReadOnly, g.Path)
		if s.Identity == nil {
			s.Identity = map[string]fileID{}
		}
		s.Identity[g.Path] = id
	}
}

// visible reports whether path lies in the working directory, a grant or
// a curated home entry, which the sandbox sees anyway.
func visible(p *spec.Policy, path string) bool {
	under := func(dir string) bool {
		return dir != "" && (path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/"))
	}
	if under(p.WorkDir) {
		return true
	}
	for _, g := range p.Grants {
		if under(g.Path) {
			return true
		}
	}
	return slices.ContainsFunc(p.View.HomeRead, under)
}

// socketLayer describes the guard for the report, and adds what Strict
// enforcement misses when the host cannot hold it.
func (e *Engine) socketLayer(layers []spec.Layer, missing []string) ([]spec.Layer, []string) {
	l := spec.Layer{Name: "unix-sockets", Active: e.guardsSockets()}
	switch {
	case l.Active:
		l.Detail = fmt.Sprintf("connect() and sends to path Unix sockets supervised: only the sandbox's own sockets and %d granted ones", len(e.policy.Sockets))
	case !e.ns.Mount:
		l.Detail = "needs the sandbox's namespaces: a host Unix socket reachable by path can be connected to"
	case e.policy.HostNetwork:
		// Chosen with the host's network: the guard tells the sandbox's
		// sockets from the host's by network namespace.
		l.Detail = "not supervised on the host's network: a host Unix socket in a directory the sandbox sees can be connected to"
		e.gaps = append(e.gaps, "host network: "+l.Detail)
	default:
		l.Detail = e.host.SocketGuardReason
		if l.Detail == "" {
			l.Detail = "the kernel lacks what the socket guard needs"
		}
		missing = append(missing, "unix sockets: "+l.Detail)
		if e.policy.BestEffort {
			e.gaps = append(e.gaps, "no socket guard: a host Unix socket that appears in a visible directory after the start can be connected to ("+l.Detail+")")
		}
	}
	return append(layers, l), missing
}

// Refusals returns what the supervisor recorded as refused since the last
// call, if anything.
func (e *Engine) Refusals() []spec.SandboxRefusal {
	e.zmu.Lock()
	defer e.zmu.Unlock()
	z := e.zyg
	if z == nil || !e.refusalsPending {
		return nil
	}
	e.refusalsPending = false
	r, err := z.run(&commandSpec{Refusals: true}, nil)
	if err != nil {
		return nil
	}
	out := make([]spec.SandboxRefusal, 0, len(r.Refused))
	for _, c := range r.Refused {
		out = append(out, spec.SandboxRefusal{Kind: c.Kind, Subject: c.Subject, Detail: c.Detail, Dropped: c.Dropped})
	}
	return out
}

// SupervisesExec reports whether the supervisor watches every exec of the
// sandbox: it is the socket guard's (helper_observe_linux.go).
func (e *Engine) SupervisesExec() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.guardsSockets()
}
