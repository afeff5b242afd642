package darwin

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"github.com/moat-sandbox/moat/internal/gitguard"
	"github.com/moat-sandbox/moat/internal/sbpl"
	"github.com/moat-sandbox/moat/internal/spec"
	"golang.org/x/sys/unix"
)

// Engine enforces one Policy for every command of a sandbox with
// sandbox-exec. The zero value is not usable; create one with New.
type Engine struct {
	policy  spec.Policy
	input   sbpl.Input
	layers  []spec.Layer
	missing []string
	gaps    []string
	// lifeline's write end is held while the sandbox lives; each
	// command's watcher kills its process group when it closes.
	lifeR, lifeW *os.File

	mu     sync.Mutex
	hostLn net.Listener
	procs  map[*process]struct{}
	closed bool
}

// Options are what package moat tells the backend beyond the policy.
// The zero value asks for nothing more.
type Options struct {
	// AllowTCCPrompts is Config's switch of that name.
	AllowTCCPrompts bool
}

// New decides how Policy p is enforced on this host and checks the
// profile it will use. Missing lists what strict enforcement would need
// and the host lacks; the caller decides.
func New(p spec.Policy, o Options) (*Engine, error) {
	if len(p.FS.Virtual) > 0 {
		return nil, errors.New("virtual files need a mount namespace, which macOS has not: Seatbelt cannot show content that is not on the host")
	}
	helper, err := os.Executable()
	if err == nil {
		helper, err = filepath.EvalSymlinks(helper)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox helper: %w", err)
	}
	places := p.WritablePlaces()
	h := Host{
		Helper:          helper,
		Root:            os.Geteuid() == 0,
		IsDir:           isDir,
		Entries:         entries,
		ControlPaths:    controlPaths(places),
		AllowTCCPrompts: o.AllowTCCPrompts,
	}
	e := &Engine{policy: p, input: ProfileInput(p, h), procs: map[*process]struct{}{}}
	// Build once now, so a policy the profile cannot express fails here.
	prof, err := sbpl.Build(e.input)
	if err != nil {
		return nil, err
	}
	if _, err := sbpl.Parse(prof); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	_, statErr := os.Stat(SandboxExec)
	e.layers, e.missing, e.gaps = assess(&p, facts{sandboxExec: statErr == nil, controlled: true})
	e.lifeR, e.lifeW, err = os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("lifeline: %w", err)
	}
	if p.Network.ProxyPort > 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p.Network.ProxyPort))
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("proxy listener: %w", err)
		}
		e.hostLn = ln
		if p.Hooks.ServeProxy != nil {
			p.Hooks.ServeProxy(ln)
		}
	}
	return e, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func entries(dir string) []string {
	ents, _ := os.ReadDir(dir)
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// controlPaths are the git control paths and .moat-* entries of the
// writable places that stay read-only (readOnlyControl).
func controlPaths(places []string) []string {
	if len(places) == 0 {
		return nil
	}
	out := readOnlyControl(gitguard.Take(places).Paths(), func(p string) bool {
		fi, err := os.Lstat(p)
		return err == nil && fi.IsDir()
	})
	for _, w := range places {
		for _, e := range entries(w) {
			if len(filepath.Base(e)) > 6 && filepath.Base(e)[:6] == ".moat-" {
				out = append(out, e)
			}
		}
	}
	return out
}

// Missing lists what Strict enforcement needs and the host lacks.
func (e *Engine) Missing() []string { return slices.Clone(e.missing) }

// Report lists every layer, whether it is active, and the gaps.
func (e *Engine) Report() spec.Report {
	return spec.Report{Platform: "darwin", Layers: slices.Clone(e.layers), Gaps: slices.Clone(e.gaps)}
}

// ExecRoots are the paths under which the sandbox may execute files.
func (e *Engine) ExecRoots() []string { return execRoots(&e.policy) }

// Fallback is always false: there are no namespaces to fall back from.
func (e *Engine) Fallback(error) bool { return false }

// OpenTerminal is not offered: the profile lets no sandbox open a
// pseudo-terminal, and one made on the host is the caller's.
func (e *Engine) OpenTerminal() (master, slave *os.File, ok bool, err error) {
	return nil, nil, false, nil
}

// Refusals is always empty: Seatbelt refuses host sockets and execs
// without telling moat.
func (e *Engine) Refusals() []spec.SandboxRefusal { return nil }

// SupervisesExec is false: no supervisor watches execs here.
func (e *Engine) SupervisesExec() bool { return false }

// Close kills every command's process group, which also ends the
// watchers, and closes the proxy's listener.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	procs := make([]*process, 0, len(e.procs))
	for p := range e.procs {
		procs = append(procs, p)
	}
	ln := e.hostLn
	e.hostLn = nil
	e.mu.Unlock()
	for _, p := range procs {
		p.Kill()
	}
	if e.lifeW != nil {
		e.lifeW.Close()
		e.lifeR.Close()
	}
	if ln != nil {
		ln.Close()
	}
	return nil
}

// Start runs c in the sandbox with files as its descriptors 0, 1, 2 and
// up.
func (e *Engine) Start(c *spec.Command, files []*os.File) (spec.Process, error) {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, &spec.StartError{Code: 125, Msg: "sandbox is closed"}
	}
	if _, err := os.Stat(SandboxExec); err != nil {
		return nil, &spec.StartError{Code: 125, Msg: "sandbox-exec: " + SandboxExec + " not found"}
	}
	in := e.input
	in.Terminals = terminals(files)
	prof, err := sbpl.Build(in)
	if err != nil {
		return nil, &spec.StartError{Code: 125, Msg: err.Error()}
	}
	keep := 0
	if len(files) > 3 {
		keep = len(files) - 3
	}
	l := e.policy.Limits
	hs := helperSpec{
		Path: c.Path, Args: c.Args, Env: c.Env, Keep: keep,
		Rlimits:  rlimitPlan(l.CPUSeconds, l.FileSizeBytes, l.Processes, l.OpenFiles, userProcesses()),
		Nice:     e.policy.Nice,
		IOPolicy: ioPolicy(e.policy.IOPriority),
		Watch:    true,
	}
	payload, err := encodeSpec(hs)
	if err != nil {
		return nil, &spec.StartError{Code: 125, Msg: err.Error()}
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, &spec.StartError{Code: 125, Msg: "pipe: " + err.Error()}
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, &spec.StartError{Code: 125, Msg: "pipe: " + err.Error()}
	}
	base := len(files)
	if base < 3 {
		base = 3
	}
	child := make([]*os.File, base, base+3)
	copy(child, files)
	child = append(child, specR, statW, e.lifeR)
	argv := append([]string{SandboxExec}, prof.Args()...)
	argv = append(argv, "--", e.input.Helper, helperArg)
	proc, err := os.StartProcess(SandboxExec, argv, &os.ProcAttr{
		Dir:   c.Dir,
		Env:   []string{HelperEnv + "=run:" + strconv.Itoa(base)},
		Files: child,
		Sys:   &syscall.SysProcAttr{Setsid: true, Setctty: c.Pty, Ctty: 0},
	})
	specR.Close()
	statW.Close()
	if err != nil {
		specW.Close()
		statR.Close()
		return nil, &spec.StartError{Code: 125, Msg: "sandbox-exec: " + err.Error()}
	}
	// A helper that died makes this write fail, which the status below
	// explains.
	_, _ = specW.Write(payload)
	specW.Close()
	b, _ := io.ReadAll(io.LimitReader(statR, 64<<10))
	statR.Close()
	st := parseStatus(b)
	if !st.Ready || st.Code != 0 {
		state, _ := proc.Wait()
		_ = syscall.Kill(-proc.Pid, syscall.SIGKILL)
		switch {
		case st.Code != 0:
			return nil, &spec.StartError{Code: st.Code, Msg: st.Msg}
		default:
			return nil, &spec.StartError{Code: 125, Msg: fmt.Sprintf("sandbox-exec did not start the sandbox (%v): the profile was refused or the helper could not run", state)}
		}
	}
	p := &process{e: e, proc: proc, stop: make(chan struct{})}
	if l.MemoryBytes > 0 {
		go p.watchMemory(l.MemoryBytes, p.stop)
	}
	e.mu.Lock()
	e.procs[p] = struct{}{}
	e.mu.Unlock()
	return p, nil
}

// userProcesses counts the processes of this user, which RLIMIT_NPROC
// counts too.
func userProcesses() int {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.uid", os.Getuid())
	if err != nil {
		return 0
	}
	return len(procs)
}

// process is one started command, the leader of its process group.
type process struct {
	e    *Engine
	proc *os.Process
	stop chan struct{} // closed by Wait: ends the memory watch
	mu   sync.Mutex
	done bool
	// reason is why the memory watch killed the group; empty if it did
	// not.
	reason string
}

// Process is the command's process: sandbox-exec, the helper and the
// command share one PID.
func (p *process) Process() *os.Process { return p.proc }

// Wait reaps the command and kills what is left of its process group.
func (p *process) Wait() (*os.ProcessState, error) {
	state, err := p.proc.Wait()
	close(p.stop)
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
	// The group outlives its leader while members remain, and its ID is
	// not reused while it exists.
	_ = syscall.Kill(-p.proc.Pid, syscall.SIGKILL)
	p.e.mu.Lock()
	delete(p.e.procs, p)
	p.e.mu.Unlock()
	return state, err
}

// Kill ends the command's process group. Once Wait has reaped the leader
// it does nothing: the group's ID may since name another group.
func (p *process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		_ = syscall.Kill(-p.proc.Pid, syscall.SIGKILL)
		_ = p.proc.Kill()
	}
}

// Reason, after Wait, says why the memory watch killed the command, or
// is empty.
func (p *process) Reason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reason
}

// Engine is a spec.Backend.
var _ spec.Backend = (*Engine)(nil)
