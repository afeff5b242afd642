package linux

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"syscall"

	"github.com/moat-sandbox/moat/internal/cgroup"
)

// Policy is the resolved, OS-level form of a sandbox configuration. Limits
// here are final: zero means no limit.
type Policy struct {
	ID         string
	WorkDir    string
	Grants     []Grant
	Limits     Limits
	Nice       int
	IOPriority int
	BestEffort bool

	// Isolation is the level: IsolationStrict, IsolationDefault or
	// IsolationPermissive.
	Isolation int
	// AutoWorkDir marks a working directory moat created and removes, in
	// which nothing persists after the sandbox.
	AutoWorkDir bool
	// HomeRead are paths in the user's home the level makes readable.
	HomeRead []string
	// Protected are paths that stay unreadable wherever the level or a
	// grant of a parent would expose them (resolved; a protected link and
	// its target both appear). HideHome adds the home itself, with HomeRead
	// carved back out of it.
	Protected []string
	HideHome  string
	// Home is the user's home directory, resolved.
	Home string
	// AllowGPU exposes the GPU device nodes and driver files.
	AllowGPU bool
	// PrivateTmp and PrivateVarTmp are host directories of this sandbox
	// alone that become its /tmp and /var/tmp with a mount namespace
	// (without one, PrivateTmp is writable at its own path, for TMPDIR);
	// PrivateHome is its HOME, writable at its own path. Empty means
	// none. All three are writable and never executable.
	PrivateTmp, PrivateVarTmp, PrivateHome string
	// ExecWorkDir makes the working directory executable as well as
	// writable (build mode); false keeps it never executable.
	ExecWorkDir bool
	// Scratch are directories that moat created for this sandbox alone and
	// removes with it, which the sandbox may write and execute (build
	// mode's GOTMPDIR). Nil means none. Unlike a grant, nothing there
	// outlives the sandbox, so no control paths are kept in them.
	Scratch []string

	// Sockets are host Unix socket files the sandbox may connect to
	// (Path, with Dev and Ino of the socket checked at configuration;
	// Write and Exec unused). Nil means none: with the socket guard, only
	// sockets the sandbox bound itself are reachable.
	Sockets []Grant

	// ProxyPort is the policy proxy's port; zero means no network at all.
	// With a network namespace the proxy listens on 127.0.0.1:ProxyPort
	// inside it; without one, on the host's loopback.
	ProxyPort int
	// ServeProxy is given each listener the proxy must serve; it must not
	// block. The engine closes the listeners.
	ServeProxy func(net.Listener)
	// DNSQuery, when set, is told each name the sandbox looks up through
	// its resolv.conf, which a sandbox with a network namespace has point
	// at a stub that answers "no such name" (dnsstub_linux.go). It must
	// not block. Nil still runs the stub, so lookups fail at once.
	DNSQuery func(name string)
}

// Isolation levels, as in the moat package.
const (
	IsolationStrict = iota
	IsolationDefault
	IsolationPermissive
)

// Grant is one granted path. Read access is implied. The zero value grants
// nothing usable (an empty path).
type Grant struct {
	Path        string
	Write, Exec bool
	// Dev and Ino identify the object checked at configuration; zero
	// means unchecked.
	Dev, Ino uint64
}

// Limits are final resource limits; zero means none.
type Limits struct {
	MemoryBytes, CPUSeconds, FileSizeBytes, Processes, OpenFiles int64
}

// Layer is one enforcement layer and whether it is active. The zero value
// is an unnamed, inactive layer.
type Layer struct {
	Name   string
	Active bool
	Detail string
}

// Engine enforces one Policy for every command of a sandbox. The zero
// value is not usable; create one with New.
type Engine struct {
	policy  Policy
	host    HostInfo
	ns      namespaces
	cg      *cgroup.Group
	layers  []Layer
	missing []string
	base    helperSpec
	gaps    []string
	control *controlPlan // placeholders for control paths, removed by Close
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
}

// New decides how Policy p is enforced on this host. Missing lists what
// strict enforcement would need and the host lacks; the caller decides.
func New(p Policy) (*Engine, error) {
	e := &Engine{policy: p, host: Probe()}
	if err := e.setupCgroup(); err != nil {
		return nil, err
	}
	if places := p.writablePlaces(); len(places) > 0 && e.host.UserNS {
		cp, err := planControlPaths(places)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("control paths: %w", err)
		}
		e.control = cp
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
	need := e.policy.ProxyPort > 0 && !e.ns.Net && e.hostLn == nil
	e.mu.Unlock()
	if !need {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(e.policy.ProxyPort))
	if err != nil {
		return fmt.Errorf("proxy listener: %w", err)
	}
	e.mu.Lock()
	e.hostLn = ln
	e.mu.Unlock()
	if e.policy.ServeProxy != nil {
		e.policy.ServeProxy(ln)
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
	e.ns = namespaces{}
	if withNamespaces {
		e.ns = namespaces{User: true, Mount: true, PID: true, Net: true, IPC: true, UTS: true, Cgroup: true}
	}
	e.gaps = nil
	e.gen++
	e.base = e.buildBaseSpec()
	e.applySocketGuard(&e.base)
	e.layers, e.missing = e.assess()
	e.layers, e.missing = e.socketLayer(e.layers, e.missing)
}

// DisableNamespaces makes this engine run without namespaces from the next
// command on, as on a host that refuses them (tests use it to exercise that
// path; Landlock and seccomp still hold).
func (e *Engine) DisableNamespaces() error {
	e.configure(false)
	return e.listenOnHost()
}

// NamespaceFailure reports whether err, from starting a helper, shows that
// the host refuses the namespaces. If so, it records that for the whole
// process and reconfigures this engine without them; the caller retries.
func (e *Engine) NamespaceFailure(err error) bool {
	e.mu.Lock()
	usingNS := e.ns.User
	e.mu.Unlock()
	if !usingNS {
		return false
	}
	var se *StartError
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

// Layers lists every layer and whether it is active.
func (e *Engine) Layers() []Layer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.layers
}

// Close discards the pre-forked helpers and releases the sandbox's cgroup,
// killing anything left in it.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.closeZygote()
	e.control.cleanup()
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
	if e.policy.Isolation == IsolationPermissive {
		return []string{"/"} // the kernel refuses shared temp
	}
	roots := append(append([]string(nil), systemExec...), e.policy.HomeRead...)
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
