package moat

import (
	"runtime"
	"slices"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/ipchost"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/ipc"
)

// Typed IPC ([Config.IPC], package ipc): each registered command is a
// shim, first on the sandbox's PATH, that runs this same binary as the
// command's client; the client reaches the host's handler through a Unix
// socket beside the shims. internal/ipchost makes the directory, the
// shims and the server; this file decides whether this binary may serve
// and what the sandbox is granted.

// startIPC starts the sandbox's IPC server when Config.IPC is set: it
// makes the directory, listens on the socket, writes the shims, and adds
// what the sandbox needs to its configuration (the shims and this binary
// readable and executable, the socket connectable). On error nothing is
// left behind.
func (s *Sandbox) startIPC() error {
	r := s.cfg.IPC
	if r == nil {
		return nil
	}
	if err := validateIPC(r); err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		return errorf("ipc: not supported on windows yet")
	}
	bin, err := ipchost.Binary()
	if err != nil {
		return errorf("%w", err)
	}
	if s.disk.Written(bin) {
		return errorf("ipc: this program's binary %q lies where the sandbox writes; the sandbox would run it as the shims' client, so it could replace it: build it elsewhere", bin)
	}
	if s.cfg.Isolation == IsolationPermissive && !paths.UnderAny(bin, hostview.SharedTempDirs) && ipchost.UserCanReplace(bin) {
		// The permissive level writes nearly everything the user may.
		return errorf("ipc: this program's binary %q is one the user may replace, and the permissive level lets the sandbox write nearly everything the user may, so it could replace it and run its own program on the host later: use the default or strict level, or install the program where the user cannot write", bin)
	}
	st, err := ipchost.Start(ipchost.Options{
		Router: r, SandboxID: s.id, StateDir: s.dirs.State, WorkDir: s.dirs.Work,
		Permissive: s.cfg.Isolation == IsolationPermissive, Binary: bin,
		Hooks: ipchost.Hooks{Written: s.disk.Written},
	})
	if err != nil {
		return errorf("%w", err)
	}
	s.cfg.Grants = append(slices.Clip(s.cfg.Grants),
		Grant{Path: st.ShimDir(), Access: READ | EXEC},
		Grant{Path: bin, Access: READ | EXEC})
	s.cfg.Sockets = append(slices.Clip(s.cfg.Sockets), st.Socket())
	s.ipc = st
	return nil
}

// validateIPC refuses a router that had a registration error (an invalid
// or duplicate name), which Register also returned: Config.Validate calls
// it, so New refuses the router before creating anything.
func validateIPC(r *ipc.Router) error {
	if err := ipchost.Validate(r); err != nil {
		return &ipcConfigError{msg: err.Error()}
	}
	return nil
}

// ipcConfigError is a router that failed validateIPC. It reads "moat:
// ipc: command NAME: problem" and matches ErrInvalidConfig.
type ipcConfigError struct{ msg string }

func (e *ipcConfigError) Error() string { return "ipc: " + e.msg }

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ipcConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// IPCEndpoint returns the path of the sandbox's IPC socket, which
// MOAT_IPC_ENDPOINT names inside, or "" without [Config.IPC].
func (s *Sandbox) IPCEndpoint() string { return s.ipc.Socket() }

// IPCShimDir returns the directory of the sandbox's IPC shims, first on
// its PATH, or "" without [Config.IPC].
func (s *Sandbox) IPCShimDir() string { return s.ipc.ShimDir() }
