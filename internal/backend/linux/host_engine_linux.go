package linux

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"github.com/moat-sandbox/moat/internal/cgroup"
	"github.com/moat-sandbox/moat/internal/spec"
)

// Engine enforces one Policy for every command of a sandbox. The zero
// value is not usable; create one with New.
type Engine struct {
	policy  spec.Policy
	host    HostInfo
	ns      namespaces
	cg      *cgroup.Group
	layers  []spec.Layer
	missing []string
	base    helperSpec
	gaps    []string
	control *controlPlan // placeholders for control paths, removed by Close
	guards  *denyGuards  // placeholders for missing denied paths, removed by Close
	hostLn  net.Listener // the proxy's listener on the host, without a network namespace
	gen     int          // bumped by configure: a zygote built before is stale
	closed  bool
	mu      sync.Mutex // guards everything above from ns on

	cgReason string // why the sandbox has no cgroup, for the report; set by New
	// etcHidden is what a root sandbox must not read in /etc, scanned
	// once per configuration by buildBaseSpec; nil when not root.
	etcHidden []string

	zmu     sync.Mutex // guards zyg and running; taken before mu
	zyg     *zygote
	running int // commands started and not yet waited for
	// pending is a zygote spawned ahead (Adopt), used by the first start
	// that fits it. Guarded by zmu.
	pending *Spawned
	// refusalsPending says the init reported new socket-guard refusals,
	// which SocketRefusals then collects from the zygote; without it,
	// no round trip is made. Guarded by zmu.
	refusalsPending bool
}

// New decides how Policy p is enforced on this host. Missing lists what
// strict enforcement would need and the host lacks; the caller decides.
func New(p spec.Policy) (*Engine, error) {
	e := &Engine{policy: p, host: Probe()}
	if err := e.checkVirtual(); err != nil { // host_fspolicy_linux.go
		return nil, err
	}
	if err := e.setupCgroup(); err != nil {
		return nil, err
	}
	if places := p.WritablePlaces(); len(places) > 0 && e.host.UserNS {
		cp, err := planControlPaths(places)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("control paths: %w", err)
		}
		e.control = cp
	}
	if len(p.FS.Deny) > 0 && e.host.UserNS {
		e.guards = planDenyGuards(&e.policy, e.grantedPath) // host_denyguard_linux.go
	}
	e.configure(e.host.UserNS)
	if err := e.listenOnHost(); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// listenOnHost opens the proxy's listener on the host's loopback when the
// sandbox has no network namespace of its own to hold it.
func (e *Engine) listenOnHost() error {
	e.mu.Lock()
	need := e.policy.Network.ProxyPort > 0 && !e.ns.Net && e.hostLn == nil
	e.mu.Unlock()
	if !need {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(e.policy.Network.ProxyPort))
	if err != nil {
		return fmt.Errorf("proxy listener: %w", err)
	}
	e.mu.Lock()
	e.hostLn = ln
	e.mu.Unlock()
	if e.policy.Hooks.ServeProxy != nil {
		e.policy.Hooks.ServeProxy(ln)
	}
	return nil
}

// configure decides the spec and the report, with or without namespaces.
func (e *Engine) configure(withNamespaces bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if reason := namespaceFailure(); reason != "" {
		e.host.UserNS, e.host.UserNSReason = false, reason
	}
	e.plan(withNamespaces)
}

// plan decides the helper's spec (the Landlock rules, mounts, seccomp
// choices and limits) and the report from the policy and e.host, with or
// without namespaces. It reads nothing of the host's state but the paths
// the policy names (plan_golden_linux_test.go runs it on a synthetic
// host). The caller holds e.mu.
func (e *Engine) plan(withNamespaces bool) {
	e.ns = namespaces{}
	if withNamespaces {
		e.ns = namespaces{User: true, Mount: true, PID: true, Net: !e.policy.HostNetwork, IPC: true, UTS: true, Cgroup: true}
	}
	e.gaps = nil
	e.gen++
	e.base = e.buildBaseSpec()
	e.applySocketGuard(&e.base)
	e.layers, e.missing = e.assess()
	e.layers, e.missing = e.socketLayer(e.layers, e.missing)
}

// Fallback reports whether err, from starting a helper, shows that
// the host refuses the namespaces. If so, it records that for the whole
// process and reconfigures this engine without them; the caller retries.
func (e *Engine) Fallback(err error) bool {
	e.mu.Lock()
	usingNS := e.ns.User
	e.mu.Unlock()
	if !usingNS || len(e.policy.FS.Virtual) > 0 {
		return false // virtual files exist only in a mount namespace
	}
	var se *spec.StartError
	var spawn *spawnError
	var errno syscall.Errno
	switch {
	case errors.As(err, &se) && se.Namespaces:
	case errors.As(err, &spawn) && errors.As(err, &errno) && (errno == syscall.EPERM || errno == syscall.EINVAL ||
		errno == syscall.ENOSPC || errno == syscall.EUSERS || errno == syscall.EACCES):
	default:
		return false
	}
	markNamespacesUnavailable(err.Error())
	e.configure(false)
	if e.listenOnHost() != nil {
		return false // the retry could not reach the proxy; report the first error
	}
	return true
}

// Missing lists the restrictions the host cannot enforce for this policy.
func (e *Engine) Missing() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.missing
}

// Report lists every layer, whether it is active, and the gaps a
// best-effort sandbox is left with.
func (e *Engine) Report() spec.Report {
	e.mu.Lock()
	defer e.mu.Unlock()
	return spec.Report{Platform: "linux", Layers: slices.Clone(e.layers), Gaps: slices.Clone(e.gaps)}
}

// Close discards the pre-forked helpers and releases the sandbox's cgroup,
// killing anything left in it.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.closeZygote()
	e.zmu.Lock()
	e.pending.Close()
	e.pending = nil
	e.zmu.Unlock()
	e.control.cleanup()
	e.guards.cleanup()
	e.mu.Lock()
	if e.hostLn != nil {
		e.hostLn.Close()
		e.hostLn = nil
	}
	e.mu.Unlock()
	if e.cg != nil {
		err := e.cg.Remove()
		e.cg = nil
		return err
	}
	return nil
}

func (e *Engine) setupCgroup() error {
	lim := cgroup.Limits{MemoryBytes: e.policy.Limits.MemoryBytes, MaxProcs: e.policy.Limits.Processes}
	g, err := cgroup.New("moat-"+e.policy.ID, lim)
	if err != nil {
		// Not root: a delegated v2 subtree is a bonus; without one the
		// init's memory watch and the IPC limits hold, as reported.
		if errors.Is(err, cgroup.ErrUnavailable) || !e.host.Root || e.policy.BestEffort {
			e.cgReason = err.Error()
			return nil
		}
		return fmt.Errorf("cgroup: %w", err)
	}
	e.cg = g
	return nil
}

// ExecRoots are the paths under which the sandbox may execute files.
func (e *Engine) ExecRoots() []string {
	if e.policy.Level == spec.LevelPermissive {
		return []string{"/"} // the kernel refuses shared temp
	}
	roots := append(append([]string(nil), systemExec...), e.policy.View.HomeRead...)
	roots = append(roots, e.policy.Scratch...)
	if e.policy.ExecWorkDir {
		roots = append(roots, e.policy.WorkDir)
	}
	for _, g := range e.policy.Grants {
		if g.Exec {
			roots = append(roots, g.Path)
		}
	}
	return roots
}

// Engine is a spec.Backend.
var _ spec.Backend = (*Engine)(nil)
