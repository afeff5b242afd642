package moat

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/ipc"
)

// Typed IPC ([Config.IPC], package ipc): each registered command is a shim
// in a directory outside the working directory, first on the sandbox's
// PATH, that runs this same binary as the command's client (ipc_shim.go);
// the client reaches the host's handler through a Unix socket beside it:
//
//	DIR/             0700, the host's alone
//	  s              the socket, 0600 (MOAT_IPC_ENDPOINT)
//	  bin/           the shims: granted read+execute, never writable
//
// The directory is a fresh moat-ID-ipc-* in the user's runtime directory
// or cache directory, else in the sandbox's state directory (see
// makeIPCDir for why); Close removes it.

// ipcState is a sandbox's IPC server and the host directory it lives in.
type ipcState struct {
	dir      string // the 0700 directory
	own      bool   // dir lies outside the state directory: Close removes it
	socket   string
	shims    string
	binary   string
	server   *ipc.Server
	serveErr chan error
}

// ipcSocketName and ipcShimDirName are the entries of the IPC directory.
const (
	ipcSocketName  = "s"
	ipcShimDirName = "bin"
)

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
	bin, err := ipcBinary()
	if err != nil {
		return err
	}
	if s.writtenPlace(bin) {
		return errorf("ipc: this program's binary %q lies where the sandbox writes; the sandbox would run it as the shims' client, so it could replace it: build it elsewhere", bin)
	}
	if s.cfg.Isolation == IsolationPermissive && !paths.UnderAny(bin, hostview.SharedTempDirs) && userCanReplace(bin) {
		// The permissive level writes nearly everything the user may.
		return errorf("ipc: this program's binary %q is one the user may replace, and the permissive level lets the sandbox write nearly everything the user may, so it could replace it and run its own program on the host later: use the default or strict level, or install the program where the user cannot write", bin)
	}
	dir, own, err := s.makeIPCDir()
	if err != nil {
		return err
	}
	st := &ipcState{dir: dir, own: own, socket: filepath.Join(dir, ipcSocketName), shims: filepath.Join(dir, ipcShimDirName), binary: bin}
	fail := func(err error) error {
		st.close()
		if !own {
			_ = os.RemoveAll(dir)
		}
		return err
	}
	if err := writeShims(st.shims, bin, r.Commands()); err != nil {
		return fail(err)
	}
	l, err := ipc.Listen(st.socket)
	if err != nil {
		return fail(errorf("ipc: %s", strings.TrimPrefix(err.Error(), "ipc: ")))
	}
	st.server = &ipc.Server{Router: r, SandboxID: s.id}
	st.serveErr = make(chan error, 1)
	go func() { st.serveErr <- st.server.Serve(l) }()
	s.cfg.Grants = append(slices.Clip(s.cfg.Grants),
		Grant{Path: st.shims, Access: READ | EXEC},
		Grant{Path: bin, Access: READ | EXEC})
	s.cfg.Sockets = append(slices.Clip(s.cfg.Sockets), st.socket)
	s.ipc = st
	return nil
}

// validateIPC refuses a router that had a registration error (an invalid
// or duplicate name), which Register also returned: Config.Validate calls
// it, so New refuses the router before creating anything.
func validateIPC(r *ipc.Router) error {
	if r == nil {
		return nil
	}
	if err := r.Err(); err != nil {
		return &ipcConfigError{msg: strings.TrimPrefix(err.Error(), "ipc: ")}
	}
	return nil
}

// ipcConfigError is a router that failed validateIPC. It reads "moat:
// ipc: command NAME: problem" and matches ErrInvalidConfig.
type ipcConfigError struct{ msg string }

func (e *ipcConfigError) Error() string { return "ipc: " + e.msg }

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ipcConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// ipcBinary is this program's binary, fully resolved: the shims run it.
func ipcBinary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", errorf("ipc: this program's binary: %w", err)
	}
	r, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", errorf("ipc: this program's binary %q: %w", exe, paths.Bare(err))
	}
	return r, nil
}

// makeIPCDir makes the 0700 IPC directory (own: Close removes it, not
// the state directory's removal). Where the sandbox would see it matters:
// with a mount namespace, a granted path's parents inside the sandbox's
// private /tmp are directories the sandbox writes, so it could rename
// them away and put a link to a directory it executes (the working
// directory in build mode) in their place, and a shim's name would run
// its program. So the directory goes, in order of preference, where its
// parents are the host's and read-only inside: the user's runtime
// directory, the user's cache directory; else the state directory. At
// the permissive level, which writes everything but shared temp, it
// goes in the state directory when that lies in shared temp, else in /tmp.
func (s *Sandbox) makeIPCDir() (dir string, own bool, err error) {
	if s.stateDir == "" {
		return "", false, errorf("ipc: the sandbox has no state directory")
	}
	fits := func(d string) bool { return len(filepath.Join(d, ipcSocketName)) <= ipc.MaxSocketPath }
	if s.cfg.Isolation != IsolationPermissive {
		for _, base := range ipcBases() {
			if s.writtenPlace(base) || paths.UnderAny(base, []string{s.workDir}) {
				continue
			}
			sweepIPCOnce(base) // ipc_dirs_unix.go: what a crash left
			if d, err := os.MkdirTemp(base, "moat-"+s.id+"-ipc-"); err == nil {
				if fits(d) {
					return d, true, nil
				}
				_ = os.Remove(d)
			}
		}
	}
	dir = filepath.Join(s.stateDir, "ipc")
	if fits(dir) && !s.ipcDirWritable(dir) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", false, errorf("ipc: %w", err)
		}
		return dir, false, nil
	}
	base, err := filepath.EvalSymlinks("/tmp")
	if err != nil {
		return "", false, errorf("ipc: /tmp: %w", paths.Bare(err))
	}
	dir, err = os.MkdirTemp(base, "moat-"+s.id+"-ipc-")
	if err != nil {
		return "", false, errorf("ipc: %w", err)
	}
	if !fits(dir) {
		_ = os.Remove(dir)
		return "", false, errorf("ipc: no directory short enough for a Unix socket address: %q", dir)
	}
	return dir, true, nil
}

// ipcDirWritable reports whether the sandbox could write dir: at the
// permissive level everything is writable but the shared temp
// directories, which stay read-only.
func (s *Sandbox) ipcDirWritable(dir string) bool {
	if s.cfg.Isolation != IsolationPermissive {
		return false
	}
	var shared []string
	for _, d := range hostview.SharedTempDirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			shared = append(shared, r)
		}
	}
	return !paths.UnderAny(dir, shared)
}

// close stops the server, waiting for running handlers, and removes the
// socket, the shims and the directory when the state directory does not
// hold it (Close removes that after). Nil-safe and idempotent.
func (st *ipcState) close() error {
	if st == nil {
		return nil
	}
	var err error
	if st.server != nil {
		err = st.server.Close()
		if serr := <-st.serveErr; serr != nil && !errors.Is(serr, ipc.ErrServerClosed) && !errors.Is(serr, net.ErrClosed) && err == nil {
			err = serr
		}
		st.server = nil
	}
	if rmErr := os.RemoveAll(st.shims); rmErr != nil && err == nil {
		err = rmErr
	}
	if st.own {
		if rmErr := os.RemoveAll(st.dir); rmErr != nil && err == nil {
			err = rmErr
		}
		st.own = false
	}
	if err != nil {
		return errorf("ipc: %w", err)
	}
	return nil
}

// ipcEnv is what IPC adds to the environment built so far: the shims'
// directory first on PATH, whatever else PATH holds, and
// MOAT_IPC_ENDPOINT.
func (s *Sandbox) ipcEnv(env []string) []string {
	if s.ipc == nil {
		return nil
	}
	dirs := []string{s.ipc.shims}
	for _, d := range filepath.SplitList(lookupEnv(env, "PATH")) {
		if d != s.ipc.shims {
			dirs = append(dirs, d)
		}
	}
	path := strings.Join(dirs, string(os.PathListSeparator))
	return []string{"PATH=" + path, ipc.EndpointEnv + "=" + s.ipc.socket}
}

// IPCEndpoint returns the path of the sandbox's IPC socket, which
// MOAT_IPC_ENDPOINT names inside, or "" without [Config.IPC].
func (s *Sandbox) IPCEndpoint() string {
	if s.ipc == nil {
		return ""
	}
	return s.ipc.socket
}

// IPCShimDir returns the directory of the sandbox's IPC shims, first on
// its PATH, or "" without [Config.IPC].
func (s *Sandbox) IPCShimDir() string {
	if s.ipc == nil {
		return ""
	}
	return s.ipc.shims
}
