package moat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"

	"github.com/moat-sandbox/moat/internal/buildmode"
	"github.com/moat-sandbox/moat/internal/disklimit"
	"github.com/moat-sandbox/moat/internal/hostfacts"
	"github.com/moat-sandbox/moat/internal/prestart"
)

// New checks cfg, creates the working directory if needed, and decides how
// the policy is enforced on this host. Under [Strict] enforcement it returns
// an [*UnsupportedError] if the host cannot enforce the policy. On Linux it
// also starts the sandbox's helper process at once, so that the first
// command starts sooner; [Sandbox.Close] ends it.
func New(cfg Config) (*Sandbox, error) {
	py := readPythonHost(cfg) // defaults.go: the host read of the venv
	cfg, err := normalize(cfg, &py)
	if err != nil {
		return nil, err
	}
	if err := checkDiskPlatform(cfg.Limits); err != nil { // disk.go
		return nil, err
	}
	s := &Sandbox{cfg: cfg, id: randomID(), running: make(map[*Cmd]struct{})}
	// The zygote's exec and runtime start while New works out the policy;
	// openBackend hands it to the backend, and a failure before ends it.
	pre := prestartBackend() // backend_linux.go
	defer func() { closePrestarted(pre) }()
	if err := s.prepareWorkDir(); err != nil {
		return nil, err
	}
	s.disk = disklimit.Limit{DiskBytes: cfg.Limits.DiskBytes, DiskInodes: cfg.Limits.DiskInodes,
		FileSize: cfg.Limits.FileSizeBytes, WorkDir: s.dirs.Work, Grants: writableGrants(cfg.Grants), Private: func() []string { return s.dirs.PrivateRoots(s.caches.Stores()) }, Free: hostfacts.FreeBytes}
	s.build = buildmode.Mode{On: cfg.Build, Permissive: cfg.Isolation == IsolationPermissive,
		WorkDir: s.dirs.Work, StateDir: s.dirs.State, Written: s.disk.Written, Refused: &s.refused}
	if p := cfg.Python; p != nil && p.AllowPipInstall {
		s.build.PipVenv = p.Venv
	}
	s.pre = prestart.Checks{Set: cfg.Env.Set, Passthrough: cfg.Env.Passthrough, Deny: cfg.Deny, Hooks: prestart.Hooks{
		View: s.checkView, TempInside: func() string { return tempInside(s.dirs.Tmp(), s.cfg.Grants, s.backend) }, Written: s.disk.Written, Protection: protectionOf, HostProgram: hostProgram, Refused: &s.refused}}
	// workdir.go: sweeps what runs killed before Close left, then
	// records the git control paths, the run journal and the places.
	if err := s.openJournal(); err != nil {
		s.removeWorkDir()
		return nil, err
	}
	defer func() {
		if s.backend == nil { // New failed: no command ran
			s.journal.Close()
		}
	}()
	s.view = protectStateRoot(homeView(&s.cfg), &s.caches) // backend.go, workdir.go
	if s.proxy, err = newNetProxy(s); err != nil {         // proxy.go
		s.removeWorkDir()
		return nil, err
	}
	if err := s.startIPC(); err != nil { // ipc_sandbox.go
		s.proxy.close()
		s.removeWorkDir()
		return nil, err
	}
	eng, err := s.openBackend(pre) // backend.go
	pre = nil                      // the backend's now
	if err != nil {
		s.ipc.Close()
		s.proxy.close()
		s.removeWorkDir()
		return nil, err
	}
	if missing := eng.Missing(); len(missing) > 0 && cfg.Enforcement == Strict {
		eng.Close()
		s.ipc.Close()
		s.proxy.close()
		s.removeWorkDir()
		return nil, &UnsupportedError{Missing: missing}
	}
	s.backend = eng
	s.env = s.baseEnv(s.proxy.env()) // env.go, proxy.go
	s.disk.Resolve()                 // internal/disklimit
	return s, nil
}

// WorkDir returns the absolute path of the sandbox's working directory.
func (s *Sandbox) WorkDir() string { return s.dirs.Work }

// Report says which layers are enforced for this sandbox on this host.
func (s *Sandbox) Report() Report {
	return report(s.backend, s.cfg.Enforcement, Layer(s.build.Layer()), Layer(s.disk.Layer())) // backend.go, internal/buildmode, internal/disklimit
}

// Command returns a [Cmd] that runs name with args in the sandbox. As with
// [os/exec.Command], a name without a slash is looked up in PATH, here the
// sandbox's PATH.
func (s *Sandbox) Command(name string, args ...string) *Cmd {
	return s.newCmd(name, args)
}

// CommandContext is like [Sandbox.Command] but kills the command's whole
// process tree (or calls Cmd.Cancel) when ctx is done before it exits.
func (s *Sandbox) CommandContext(ctx context.Context, name string, args ...string) *Cmd {
	if ctx == nil {
		panic("moat: nil Context")
	}
	c := s.newCmd(name, args)
	c.ctx = ctx
	return c
}

// Close kills every process of the sandbox and removes the working
// directory if [New] created it. It is idempotent: later calls return nil.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cmds := make([]*Cmd, 0, len(s.running))
	for c := range s.running {
		cmds = append(cmds, c)
	}
	s.mu.Unlock()

	for _, c := range cmds {
		c.killTree("sandbox closed")
	}
	for _, c := range cmds {
		c.awaitDeath()
	}
	err := s.backend.Close()
	// Every sandboxed process is dead now.
	s.closeJournal() // workdir.go: git control checked, the run undone
	s.proxy.close()  // after the engine, which closes the listeners it served
	if ipcErr := s.ipc.Close(); err == nil && ipcErr != nil {
		err = errorf("%w", ipcErr)
	}
	if rmErr := s.removeWorkDir(); err == nil {
		err = rmErr
	}
	s.caches.Prune() // internal/cachehome: after the run released its own stores
	return err
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Refusals returns what the sandbox was refused so far, and what moat undid
// or neutralised when it closed, oldest first. Call it again after
// [Sandbox.Close] to see what Close found. Nil means nothing.
func (s *Sandbox) Refusals() []Refusal { return s.refused.Snapshot() }

// OpenTerminal returns a new pseudo-terminal for an interactive command:
// pass slave as the command's Stdin, Stdout and Stderr with Setctty, and
// use master for the other side. Where the sandbox has its own /dev/pts the
// pair is made there, so the command finds its terminal by name; ok is
// false when the platform leaves it to the caller (open a host pty then).
func (s *Sandbox) OpenTerminal() (master, slave *os.File, ok bool, err error) {
	m, sl, ok, err := s.backend.OpenTerminal()
	if err != nil {
		return nil, nil, false, errorf("terminal: %w", err)
	}
	return m, sl, ok, nil
}
