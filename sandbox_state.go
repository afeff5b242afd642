package moat

import (
	"sync"

	"github.com/moat-sandbox/moat/internal/buildmode"
	"github.com/moat-sandbox/moat/internal/cachehome"
	"github.com/moat-sandbox/moat/internal/disklimit"
	"github.com/moat-sandbox/moat/internal/ipchost"
	"github.com/moat-sandbox/moat/internal/prestart"
	"github.com/moat-sandbox/moat/internal/refusal"
	"github.com/moat-sandbox/moat/internal/runjournal"
	"github.com/moat-sandbox/moat/internal/spec"
	"github.com/moat-sandbox/moat/internal/statedir"
)

// The Sandbox struct alone, with the set of its running commands. It sits
// below the files that work on it: New and Close (sandbox.go) call down
// into those that prepare and release each part (workdir.go, proxy.go,
// ipc_sandbox.go, backend.go, env.go), and they see only the fields here.

// Sandbox is a policy, a working directory and the processes running under
// them. Create one with [New] and release it with [Sandbox.Close]. Its
// methods are safe for concurrent use. The zero value is not usable.
type Sandbox struct {
	cfg Config
	id  string
	// dirs are the working directory, the state directory (private
	// temp and home, removed by Close) and Config.Home resolved
	// (workdir.go, internal/statedir).
	dirs statedir.Dirs
	// caches holds the kept cache stores linked into the fresh home, and
	// where they live, for Close's prune (internal/cachehome, workdir.go);
	// none without Config.KeepCaches, or when another run holds them.
	caches  cachehome.Kept
	env     []string
	backend spec.Backend
	// build is build mode and where write-xor-execute holds
	// (internal/buildmode), set by New once the state directory exists.
	build buildmode.Mode
	// view is what the sandbox sees of the home directories.
	view spec.View
	// proxy is the policy proxy; nil when the network is denied.
	proxy *netProxy
	// disk is the disk limits, resolved by New, and the commands the
	// disk watch ran for (internal/disklimit; workdir.go bounds the
	// Close scan by them).
	disk disklimit.Limit

	// refused collects what the sandbox was refused, for Refusals.
	refused refusal.List
	// pre is the pre-start checks, their view and the shared-temp
	// directories they refused (internal/prestart, prestart.go).
	pre prestart.Checks
	// sharedTemp are the shared-temp entries the sandbox was shown at
	// New (backend.go: policy).
	sharedTemp []string
	// ipc is the IPC server and its directory (ipc_sandbox.go,
	// internal/ipchost); nil without Config.IPC.
	ipc *ipchost.Server
	// journal is the run journal and the git control paths of the
	// writable places at start (workdir.go, internal/runjournal); nil
	// until New opens it.
	journal *runjournal.Run

	mu      sync.Mutex
	closed  bool
	running map[*Cmd]struct{}
}

// track adds c to the running commands that Close kills; once Close has
// begun it refuses with ErrClosed.
func (s *Sandbox) track(c *Cmd) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.running[c] = struct{}{}
	return nil
}

// untrack removes c, which has ended or failed to start.
func (s *Sandbox) untrack(c *Cmd) {
	s.mu.Lock()
	delete(s.running, c)
	s.mu.Unlock()
}
