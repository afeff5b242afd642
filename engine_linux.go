package moat

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"github.com/moat-sandbox/moat/internal/backend/linux"
	_ "github.com/moat-sandbox/moat/internal/reexec" // helper role dispatch
)

type linuxEngine struct {
	e *linux.Engine
	// wx is the write-xor-execute layer of the report (build mode).
	wx Layer
	// sb receives the socket guard's refusals.
	sb *Sandbox
}

func newEngine(s *Sandbox) (engine, error) {
	p := linux.Policy{
		ID:          s.id,
		WorkDir:     s.workDir,
		Nice:        s.cfg.Nice,
		IOPriority:  int(s.cfg.IOPriority),
		BestEffort:  s.cfg.Enforcement == BestEffort,
		Isolation:   int(s.cfg.Isolation),
		AutoWorkDir: s.autoDir,
		HomeRead:    s.exposure.homeRead,
		Protected:   s.exposure.protected,
		HideHome:    s.exposure.hideHome,
		Home:        s.exposure.home,
		AllowGPU:    s.cfg.security().AllowGPU,
		// private.go
		PrivateTmp:    s.privateTmp(),
		PrivateVarTmp: s.privateVarTmp(),
		PrivateHome:   s.privateHome(),
		Limits: linux.Limits{
			MemoryBytes:   s.cfg.Limits.MemoryBytes,
			CPUSeconds:    s.cfg.Limits.CPUSeconds,
			FileSizeBytes: s.startFileSize(),
			Processes:     s.cfg.Limits.Processes,
			OpenFiles:     s.cfg.Limits.OpenFiles,
		},
	}
	for _, g := range s.cfg.Grants {
		lg := linux.Grant{Path: g.Path, Write: g.Access.CanWrite(), Exec: g.Access.CanExec()}
		// The object checked now is the one the sandbox must find at start.
		var st syscall.Stat_t
		if err := syscall.Lstat(g.Path, &st); err != nil {
			return nil, errorf("grant %q: %v", g.Path, err)
		}
		lg.Dev, lg.Ino = uint64(st.Dev), st.Ino
		p.Grants = append(p.Grants, lg)
	}
	sockets, err := socketGrants(s.cfg.Sockets)
	if err != nil {
		return nil, err
	}
	p.Sockets = sockets
	if s.proxy != nil {
		p.ProxyPort, p.ServeProxy = s.proxy.port, s.proxy.serve
	}
	p.DNSQuery = s.dnsRefuser() // dnsrefusal.go
	scratch, err := s.prepareBuild()
	if err != nil {
		return nil, err
	}
	p.ExecWorkDir = s.cfg.Build
	if scratch != "" {
		p.Scratch = []string{scratch}
	}
	e, err := linux.New(p)
	if err != nil {
		return nil, errorf("%v", err)
	}
	return &linuxEngine{e: e, wx: s.wxLayer(), sb: s}, nil
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
	r.Layers = append(r.Layers, l.wx)
	return r
}

func (l *linuxEngine) start(c *command, files []*os.File) (launch, error) {
	r, err := l.e.Start(&linux.Command{Path: c.path, Args: c.args, Env: c.env, Dir: c.dir, Pty: c.pty}, files)
	if err != nil {
		return nil, err // Cmd.start converts it, after the namespace check
	}
	return &linuxLaunch{r: r, done: l.socketRefusals}, nil
}

func (l *linuxEngine) close() error { return l.e.Close() }

// execRoots are where the sandbox may execute files.
func (l *linuxEngine) execRoots() []string { return l.e.ExecRoots() }

func (l *linuxEngine) namespaceFailure(err error) bool {
	var ce *commandError
	if errors.As(err, &ce) && ce.cause != nil {
		err = ce.cause
	}
	return l.e.NamespaceFailure(err)
}

type linuxLaunch struct {
	r *linux.Running
	// done runs once the command was waited for.
	done func()
}

func (l *linuxLaunch) process() *os.Process { return l.r.Process }
func (l *linuxLaunch) wait() (*os.ProcessState, error) {
	state, err := l.r.Wait()
	if l.done != nil {
		l.done()
	}
	return state, err
}

func (l *linuxLaunch) kill()          { l.r.Kill() }
func (l *linuxLaunch) reason() string { return l.r.Reason }

func startError(err error) error {
	se, ok := err.(*linux.StartError)
	if !ok {
		return errorf("%v", err)
	}
	if se.Redirected {
		return &commandError{msg: se.Msg, kind: ErrGrantRedirected, cause: se}
	}
	switch se.Code {
	case 127:
		return &commandError{msg: se.Msg, kind: exec.ErrNotFound, cause: se}
	case 126:
		return &commandError{msg: se.Msg, kind: errPermission, cause: se}
	}
	return &commandError{msg: se.Msg, cause: se}
}

func (l *linuxEngine) openTerminal() (*os.File, *os.File, bool, error) { return l.e.OpenPTY() }
