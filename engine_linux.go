package moat

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/moat-sandbox/moat/internal/backend/linux"
	_ "github.com/moat-sandbox/moat/internal/reexec" // helper role dispatch
)

type execCmd = *exec.Cmd

type sigNum = syscall.Signal

type linuxEngine struct {
	e *linux.Engine
}

func newEngine(s *Sandbox) (engine, error) {
	p := linux.Policy{
		ID:         s.id,
		WorkDir:    s.workDir,
		Nice:       s.cfg.Nice,
		IOPriority: int(s.cfg.IOPriority),
		BestEffort: s.cfg.Enforcement == BestEffort,
		Limits: linux.Limits{
			MemoryBytes:   s.cfg.Limits.MemoryBytes,
			CPUSeconds:    s.cfg.Limits.CPUSeconds,
			FileSizeBytes: s.cfg.Limits.FileSizeBytes,
			Processes:     s.cfg.Limits.Processes,
			OpenFiles:     s.cfg.Limits.OpenFiles,
		},
	}
	for _, g := range s.cfg.Grants {
		p.Grants = append(p.Grants, linux.Grant{Path: g.Path, Write: g.Access.CanWrite(), Exec: g.Access.CanExec()})
	}
	e, err := linux.New(p)
	if err != nil {
		return nil, errorf("%v", err)
	}
	return &linuxEngine{e: e}, nil
}

func (l *linuxEngine) missing() []string { return l.e.Missing() }

func (l *linuxEngine) report() Report {
	r := Report{Platform: "linux"}
	for _, layer := range l.e.Layers() {
		if layer.Name == "gap" {
			r.Gaps = append(r.Gaps, layer.Detail)
			continue
		}
		r.Layers = append(r.Layers, Layer{Name: layer.Name, Active: layer.Active, Detail: layer.Detail})
	}
	return r
}

func (l *linuxEngine) prepare(c *command, proc *exec.Cmd) (launch, error) {
	lc, err := l.e.Prepare(&linux.Command{
		Path: c.path, Args: c.args, Env: c.env, Dir: c.dir, ExtraFiles: c.extraFiles, Pty: c.pty,
	}, proc)
	if err != nil {
		return nil, errorf("%v", err)
	}
	return &linuxLaunch{l: lc}, nil
}

func (l *linuxEngine) kill()        { l.e.Kill() }
func (l *linuxEngine) close() error { return l.e.Close() }

type linuxLaunch struct{ l *linux.Launch }

func (l *linuxLaunch) started(pid int) error {
	if err := l.l.Started(pid); err != nil {
		return startError(err)
	}
	return nil
}

func (l *linuxLaunch) finished() outcome {
	o := l.l.Finished()
	return outcome{exited: o.Exited, exit: o.Exit, signal: syscall.Signal(o.Signal)}
}

func (l *linuxLaunch) kill()  { l.l.Kill() }
func (l *linuxLaunch) abort() { l.l.Abort() }

// spawnRequests carries helper starts to one OS thread that is locked for
// the life of the process. The helper's parent-death signal fires when the
// *thread* that forked it exits, so forking from a thread that never exits
// keeps a sandbox from dying because some unrelated goroutine's locked
// thread ended.
var spawnRequests = make(chan func())

func init() {
	go func() {
		runtime.LockOSThread() // never unlocked
		for f := range spawnRequests {
			f()
		}
	}()
}

func startOnSpawner(proc *exec.Cmd) error {
	errc := make(chan error, 1)
	spawnRequests <- func() { errc <- proc.Start() }
	return <-errc
}

func signalOf(ps interface{ Sys() any }) syscall.Signal {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// execRoots are where the sandbox may execute files.
func (l *linuxEngine) execRoots() []string { return l.e.ExecRoots() }

func startError(err error) error {
	se, ok := err.(*linux.StartError)
	if !ok {
		return errorf("%v", err)
	}
	switch se.Code {
	case 127:
		return &commandError{msg: se.Msg, kind: exec.ErrNotFound, cause: se}
	case 126:
		return &commandError{msg: se.Msg, kind: errPermission, cause: se}
	}
	return &commandError{msg: se.Msg, cause: se}
}

func (l *linuxEngine) namespaceFailure(err error) bool {
	var ce *commandError
	if errors.As(err, &ce) {
		err = ce.cause
	}
	return l.e.NamespaceFailure(err)
}
