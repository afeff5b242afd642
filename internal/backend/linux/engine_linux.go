package linux

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

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
}

// Grant is one granted path. Read access is implied.
type Grant struct {
	Path        string
	Write, Exec bool
}

// Limits are final resource limits; zero means none.
type Limits struct {
	MemoryBytes, CPUSeconds, FileSizeBytes, Processes, OpenFiles int64
}

// Layer is one enforcement layer and whether it is active.
type Layer struct {
	Name   string
	Active bool
	Detail string
}

// Engine enforces one Policy for every command of a sandbox.
type Engine struct {
	policy  Policy
	host    HostInfo
	ns      namespaces
	cg      *cgroup.Group
	layers  []Layer
	missing []string
	base    helperSpec
	gaps    []string
	mu      sync.Mutex // guards ns, base, layers, missing, gaps
}

// New decides how Policy p is enforced on this host. Missing lists what
// strict enforcement would need and the host lacks; the caller decides.
func New(p Policy) (*Engine, error) {
	e := &Engine{policy: p, host: Probe()}
	if err := e.setupCgroup(); err != nil {
		return nil, err
	}
	e.configure(e.host.UserNS)
	return e, nil
}

// configure decides the spec and the report, with or without namespaces.
func (e *Engine) configure(withNamespaces bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ns = namespaces{}
	if withNamespaces {
		e.ns = namespaces{User: true, Mount: true, PID: true, Net: true, IPC: true, UTS: true, Cgroup: true}
	}
	e.gaps = nil
	e.base = e.buildBaseSpec()
	e.layers, e.missing = e.assess()
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
	var errno syscall.Errno
	switch {
	case errors.As(err, &se) && se.Namespaces:
	case errors.As(err, &errno) && (errno == syscall.EPERM || errno == syscall.EINVAL ||
		errno == syscall.ENOSPC || errno == syscall.EUSERS || errno == syscall.EACCES):
	default:
		return false
	}
	markNamespacesUnavailable(err.Error())
	e.configure(false)
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

// Host returns what the host offers.
func (e *Engine) Host() HostInfo { return e.host }

// Close releases the sandbox's cgroup, killing anything left in it.
func (e *Engine) Close() error {
	if e.cg != nil {
		err := e.cg.Remove()
		e.cg = nil
		return err
	}
	return nil
}

// Kill ends every process in the sandbox's cgroup, when it has one.
func (e *Engine) Kill() {
	if e.cg != nil {
		_ = e.cg.Kill()
	}
}

func (e *Engine) setupCgroup() error {
	if !e.host.Root {
		return nil
	}
	lim := cgroup.Limits{MemoryBytes: e.policy.Limits.MemoryBytes, MaxProcs: e.policy.Limits.Processes}
	g, err := cgroup.New("moat-"+e.policy.ID, lim)
	if err != nil {
		if errors.Is(err, cgroup.ErrUnavailable) {
			return nil
		}
		if e.policy.BestEffort {
			return nil
		}
		return fmt.Errorf("cgroup: %w", err)
	}
	e.cg = g
	return nil
}

// Command is one command to run in the sandbox.
type Command struct {
	Path       string
	Args       []string
	Env        []string
	Dir        string
	ExtraFiles []*os.File
	Pty        bool
}

// Launch tracks one started helper.
type Launch struct {
	engine  *Engine
	spec    helperSpec
	specR   *os.File
	specW   *os.File // kept open as the helper's lifeline
	statusR *os.File
	statusW *os.File
	status  *bufio.Reader
	pidNS   bool
	Pid     int // the command's pid inside the sandbox
}

// StartError is a failure to set up or start the command; Code is 125, or
// 126/127 for a command that cannot be executed or found.
type StartError struct {
	Code int
	Msg  string
	// Namespaces marks a failure to set up the namespaces.
	Namespaces bool
}

func (e *StartError) Error() string { return e.Msg }

// Outcome is how a command ended.
type Outcome struct {
	Exited bool // false: the helper died without reporting
	Exit   int
	Signal int
}

// Prepare configures proc to run the helper for c. The caller sets stdio,
// starts proc, then calls Started.
func (e *Engine) Prepare(c *Command, proc *exec.Cmd) (*Launch, error) {
	e.mu.Lock()
	l := &Launch{engine: e, spec: e.base, pidNS: e.ns.PID}
	useNS := e.ns.User
	e.mu.Unlock()
	l.spec.Path, l.spec.Args, l.spec.Env, l.spec.Dir = c.Path, c.Args, c.Env, c.Dir
	l.spec.ExtraFiles = len(c.ExtraFiles)
	l.spec.Pty = c.Pty
	var err error
	if l.specR, l.specW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if l.statusR, l.statusW, err = os.Pipe(); err != nil {
		l.closeAll()
		return nil, err
	}
	l.status = bufio.NewReader(l.statusR)
	proc.Path = "/proc/self/exe"
	proc.Args = []string{"moat-helper"}
	proc.Env = []string{HelperEnv + "=run"}
	proc.ExtraFiles = append([]*os.File{l.specR, l.statusW}, c.ExtraFiles...)
	attr := &syscall.SysProcAttr{Setpgid: true}
	if useNS {
		attr = namespaceAttr()
	}
	if e.cg != nil && e.cg.V2FD() >= 0 {
		attr.UseCgroupFD = true
		attr.CgroupFD = e.cg.V2FD()
	}
	proc.SysProcAttr = attr
	if os.Getenv(TraceEnv) == "1" {
		l.spec.TraceStart = time.Now().UnixNano()
	}
	return l, nil
}

// Started finishes the launch after proc.Start succeeded: it places the
// helper in the cgroup, sends the spec and waits until the command runs.
func (l *Launch) Started(helperPid int) error {
	l.specR.Close()
	l.statusW.Close()
	l.specR, l.statusW = nil, nil
	if cg := l.engine.cg; cg != nil {
		if err := cg.Add(helperPid); err != nil {
			return &StartError{Code: 125, Msg: fmt.Sprintf("cgroup: %v", err)}
		}
	}
	if err := writeSpec(l.specW, &l.spec); err != nil {
		return &StartError{Code: 125, Msg: err.Error()}
	}
	st, err := l.next()
	if err != nil {
		return &StartError{Code: 125, Msg: "helper exited before the command started"}
	}
	if st.Error != "" {
		return &StartError{Code: st.Code, Msg: st.Error, Namespaces: st.Namespaces}
	}
	l.Pid = st.Pid
	return nil
}

func (l *Launch) next() (status, error) {
	line, err := l.status.ReadBytes('\n')
	if err != nil {
		return status{}, err
	}
	var st status
	if err := json.Unmarshal(line, &st); err != nil {
		return status{}, err
	}
	return st, nil
}

// Finished reads how the command ended, after the helper was reaped, and
// releases the launch.
func (l *Launch) Finished() Outcome {
	defer l.closeAll()
	for {
		st, err := l.next()
		if err != nil {
			return Outcome{}
		}
		if st.Exited {
			return Outcome{Exited: true, Exit: st.Exit, Signal: st.Signal}
		}
	}
}

// Abort releases a launch whose helper did not start.
func (l *Launch) Abort() { l.closeAll() }

func (l *Launch) closeAll() {
	for _, f := range []*os.File{l.specR, l.specW, l.statusR, l.statusW} {
		if f != nil {
			f.Close()
		}
	}
	l.specR, l.specW, l.statusR, l.statusW = nil, nil, nil, nil
}

// Kill kills the command's process group. Without a PID namespace that
// reaches the processes that stayed in the group even if the helper is
// already dead; with one, killing the helper (PID 1) ends them all.
func (l *Launch) Kill() {
	if !l.pidNS && l.Pid > 0 {
		_ = syscall.Kill(-l.Pid, syscall.SIGKILL)
	}
}

// ExecRoots are the paths under which the sandbox may execute files.
func (e *Engine) ExecRoots() []string {
	roots := append([]string(nil), systemExec...)
	for _, g := range e.policy.Grants {
		if g.Exec {
			roots = append(roots, g.Path)
		}
	}
	return roots
}
