package windows

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"strconv"
	"sync"

	xw "golang.org/x/sys/windows"

	"github.com/moat-sandbox/moat/internal/aclplan"
	"github.com/moat-sandbox/moat/internal/spec"
)

// Engine enforces one policy with an AppContainer, the access entries of
// its plan and a job object. Its methods are safe for concurrent use. The
// zero value is not usable: New makes one.
type Engine struct {
	policy  spec.Policy
	c       *container
	temp    string
	plan    aclplan.Plan
	job     xw.Handle
	ui      bool
	missing []string
	exempt  bool
	ln      net.Listener

	// mu is held shared by each Start, so that Close, which holds it
	// alone, never frees the job or the SID under a launch.
	mu     sync.RWMutex
	closed bool
}

// statKind is aclplan's Stat on this host. A reparse point (a symbolic
// link, a junction, a mount point) is refused: an access list set through
// it would land on whatever it points at now.
func statKind(path string) (aclplan.Kind, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return 0, errors.New("a reparse point (link or junction), whose target can change")
	}
	if fi.IsDir() {
		return aclplan.Dir, nil
	}
	return aclplan.File, nil
}

// New builds the sandbox of p: it refuses what Windows cannot run at all
// (Check), creates the AppContainer profile, installs the access plan,
// creates the job and, for a proxy policy, adds the loopback exemption
// and listens for the proxy. Whatever it made is undone on failure.
func New(p spec.Policy) (_ *Engine, err error) {
	if err := Check(&p, xw.GetCurrentProcessToken().IsElevated()); err != nil {
		return nil, err
	}
	e := &Engine{policy: p}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	if e.c, err = createContainer(ProfileName(p.ID), Capabilities(&p)); err != nil {
		return nil, err
	}
	if e.temp, err = e.c.temp(); err != nil {
		return nil, err
	}
	in, missing, err := PlanInput(&p, statKind, e.c.folder)
	if err != nil {
		return nil, err
	}
	e.missing = append(Missing(&p), missing...)
	if e.plan, err = aclplan.Build(in); err != nil {
		return nil, err
	}
	if err := applyPlan(e.plan, e.c.sid); err != nil {
		e.plan = aclplan.Plan{} // applyPlan revoked it
		return nil, err
	}
	if e.job, e.ui, err = newJob(Limits(p.Limits, p.Nice)); err != nil {
		return nil, err
	}
	if !e.ui {
		e.missing = append(e.missing, "windows: ui restrictions: the job object refused them (moat runs in a job that has its own)")
	}
	if p.Network.ProxyPort != 0 {
		if err := addLoopbackExemption(e.c.sid); err != nil {
			return nil, err
		}
		e.exempt = true
		if e.ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p.Network.ProxyPort)); err != nil {
			return nil, errors.New("windows: proxy listener: " + err.Error())
		}
		if p.Hooks.ServeProxy != nil {
			p.Hooks.ServeProxy(e.ln)
		}
	}
	return e, nil
}

// Missing lists what Strict enforcement needs and Windows lacks.
func (e *Engine) Missing() []string { return append([]string(nil), e.missing...) }

// Report says which layers are active.
func (e *Engine) Report() spec.Report {
	return spec.Report{Platform: "windows", Layers: Layers(&e.policy, len(e.plan.Entries), e.ui), Gaps: Gaps(&e.policy)}
}

// Start runs c in the container.
func (e *Engine) Start(c *spec.Command, files []*os.File) (spec.Process, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, &spec.StartError{Code: 125, Msg: "windows: sandbox is closed"}
	}
	return e.launch(c, files)
}

// systemRoots are the host's system directories, which every
// AppContainer may read and execute.
func systemRoots() []string {
	var roots []string
	for _, v := range []string{"SystemRoot", "ProgramFiles", "ProgramFiles(x86)", "ProgramW6432"} {
		if d := os.Getenv(v); d != "" {
			if c, err := aclplan.Canonical(d); err == nil {
				roots = append(roots, c)
			}
		}
	}
	return roots
}

// ExecRoots are the paths under which the container may run programs.
func (e *Engine) ExecRoots() []string { return ExecRoots(&e.policy, systemRoots()) }

// Fallback is false: there are no namespaces to fall back from.
func (e *Engine) Fallback(error) bool { return false }

// OpenTerminal reports that there is no pseudo-terminal here yet.
func (e *Engine) OpenTerminal() (master, slave *os.File, ok bool, err error) {
	return nil, nil, false, nil
}

// Refusals is empty: no supervisor runs here.
func (e *Engine) Refusals() []spec.SandboxRefusal { return nil }

// SupervisesExec is false: no supervisor watches execs here.
func (e *Engine) SupervisesExec() bool { return false }

// Close kills every process of the sandbox (the job), stops the proxy
// listener, removes the loopback exemption, revokes the access entries
// and deletes the profile. It returns the first failure, and goes on
// past it.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	if e.job != 0 {
		_ = xw.TerminateJobObject(e.job, 1)
		xw.CloseHandle(e.job)
		e.job = 0
	}
	if e.ln != nil {
		e.ln.Close()
	}
	if e.c != nil && e.c.sid != nil {
		if e.exempt {
			errs = append(errs, removeLoopbackExemption(e.c.sid))
		}
		errs = append(errs, revokePlan(e.plan, e.c.sid))
	}
	if e.c != nil {
		errs = append(errs, e.c.close())
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
