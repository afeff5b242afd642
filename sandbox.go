package moat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"

	"github.com/moat-sandbox/moat/internal/cachehome"
	"github.com/moat-sandbox/moat/internal/ipchost"
	"github.com/moat-sandbox/moat/internal/spec"
)

// Sandbox is a policy, a working directory and the processes running under
// them. Create one with [New] and release it with [Sandbox.Close]. Its
// methods are safe for concurrent use. The zero value is not usable.
type Sandbox struct {
	cfg     Config
	id      string
	workDir string
	autoDir bool
	// stateDir is the sandbox's own 0700 host directory holding its
	// private temp and home; removed by Close. Empty until created.
	stateDir string
	// homeDir is Config.Home, resolved; empty for a fresh private home.
	homeDir string
	// caches holds the kept cache stores linked into the fresh home
	// (caches.go); nil without Config.KeepCaches, or when another run
	// holds them. cacheLayout is where they live, for Close's prune.
	caches      *cachehome.Lease
	cacheLayout cachehome.Layout
	env         []string
	backend     spec.Backend
	// wx is the report's write-xor-execute layer, decided by New.
	wx Layer
	// view is what the sandbox sees of the home directories.
	view spec.View
	// proxy is the policy proxy; nil when the network is denied.
	proxy *netProxy
	// diskLimitBytes is the resolved Limits.DiskBytes; 0 means none.
	diskLimitBytes int64
	// diskInodeLimit is the resolved Limits.DiskInodes; 0 means none.
	diskInodeLimit int64
	// diskWatches counts the commands the disk watch ran for, each with
	// diskInodeLimit inodes of its own (gitcontrol.go bounds the Close
	// scan by them).
	diskWatches atomic.Int64
	// sweptRepos are the .git directories a sweep of a dead run's
	// journal kept, with their control paths set aside (controljournal.go).
	sweptRepos map[string]bool

	// refused collects what the sandbox was refused, for Refusals.
	refused refusals
	// pre is the view the pre-start checks use (prestart.go).
	pre prestart
	// sharedTemp are the shared-temp entries the sandbox was shown at
	// New (backend.go: policy).
	sharedTemp []string
	// tempRefused are the shared-temp directories variables named that
	// were not shown (prestart_temp.go), already refused.
	tempRefused map[string]bool
	// ipc is the IPC server and its directory (ipc_sandbox.go,
	// internal/ipchost); nil without Config.IPC.
	ipc *ipchost.Server
	// gitSnap is the git control paths of the writable places at start,
	// checked by Close (gitcontrol.go); nil when there are none.
	gitSnap *gitSnapshot
	// journal is the run journal (controljournal.go); nil when the run
	// has neither a writable place nor a missing denied path.
	journal *journalState

	mu      sync.Mutex
	closed  bool
	running map[*Cmd]struct{}
}

// New checks cfg, creates the working directory if needed, and decides how
// the policy is enforced on this host. Under [Strict] enforcement it returns
// an [*UnsupportedError] if the host cannot enforce the policy. On Linux it
// also starts the sandbox's helper process at once, so that the first
// command starts sooner; [Sandbox.Close] ends it.
func New(cfg Config) (*Sandbox, error) {
	py := readPythonHost(cfg) // python.go: the host read of the venv
	cfg, err := normalize(cfg, &py)
	if err != nil {
		return nil, err
	}
	if err := checkDiskPlatform(cfg.Limits); err != nil { // disk_platform_*.go
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
	s.sweepCrashed() // controljournal.go: what runs killed before Close left
	s.snapshotGit()
	if err := s.openJournal(); err != nil {
		s.removeWorkDir()
		return nil, err
	}
	if err := s.recordPlaces(); err != nil { // hostplaces.go
		s.closeJournal()
		s.removeWorkDir()
		return nil, err
	}
	defer func() {
		if s.backend == nil { // New failed: no command ran
			s.closeJournal()
		}
	}()
	s.view = s.homeView() // backend.go
	if err := s.startProxy(); err != nil {
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
	s.wx = s.wxLayer() // build.go; while the state directory exists
	s.env = s.baseEnv()
	s.diskLimitBytes = s.diskLimit()
	s.diskInodeLimit = s.inodeLimit()
	return s, nil
}

// WorkDir returns the absolute path of the sandbox's working directory.
func (s *Sandbox) WorkDir() string { return s.workDir }

// Report says which layers are enforced for this sandbox on this host.
func (s *Sandbox) Report() Report {
	return s.report() // backend.go
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
	s.checkGit()
	s.closeJournal() // the run is undone: placeholders gone, entries quarantined
	s.proxy.close()  // after the engine, which closes the listeners it served
	if ipcErr := s.ipc.Close(); err == nil && ipcErr != nil {
		err = errorf("%w", ipcErr)
	}
	if rmErr := s.removeWorkDir(); err == nil {
		err = rmErr
	}
	s.pruneCaches() // caches.go: after the run released its own stores
	return err
}

func (s *Sandbox) track(c *Cmd) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.running[c] = struct{}{}
	return nil
}

func (s *Sandbox) untrack(c *Cmd) {
	s.mu.Lock()
	delete(s.running, c)
	s.mu.Unlock()
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
