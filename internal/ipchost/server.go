package ipchost

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/moat-sandbox/moat/internal/hostview"
	"github.com/moat-sandbox/moat/internal/paths"
	"github.com/moat-sandbox/moat/ipc"
)

// Typed IPC (Config.IPC, package ipc): each registered command is a shim
// in a directory outside the working directory, first on the sandbox's
// PATH, that runs this same binary as the command's client (shim.go);
// the client reaches the host's handler through a Unix socket beside it:
//
//	DIR/             0700, the host's alone
//	  s              the socket, 0600 (MOAT_IPC_ENDPOINT)
//	  bin/           the shims: granted read+execute, never writable
//
// The directory is a fresh moat-ID-ipc-* in the user's runtime directory
// or cache directory, else in the sandbox's state directory (see
// makeDir for why); Close removes it.

// Server is a sandbox's IPC server and the host directory it lives in.
// The zero value is not valid; a nil *Server is no IPC, and its methods
// return the zero values.
type Server struct {
	dir      string // the 0700 directory
	own      bool   // dir lies outside the state directory: Close removes it
	socket   string
	shims    string
	binary   string
	server   *ipc.Server
	serveErr chan error
}

// socketName and shimDirName are the entries of the IPC directory.
const (
	socketName  = "s"
	shimDirName = "bin"
)

// Options is the sandbox a Server is started for. The zero value is
// not valid: Router, SandboxID and StateDir are needed.
type Options struct {
	// Router is Config.IPC, already checked by Validate.
	Router *ipc.Router
	// SandboxID names the IPC directory (moat-ID-ipc-*).
	SandboxID string
	// StateDir is the sandbox's 0700 state directory, the fallback place
	// of the IPC directory. Empty is an error.
	StateDir string
	// WorkDir is the sandbox's working directory, never a base of the
	// IPC directory.
	WorkDir string
	// Permissive is the permissive isolation level, which writes nearly
	// everything the user may. False is the default or strict level.
	Permissive bool
	// Binary is this program's binary, fully resolved (see [Binary]):
	// the shims run it.
	Binary string
	// Hooks asks the sandbox what it writes.
	Hooks Hooks
}

// Hooks are the sandbox's answers a Server needs. The zero value writes
// nowhere.
type Hooks struct {
	// Written reports whether the sandbox writes path. Nil means it
	// writes nowhere.
	Written func(path string) bool
}

func (h Hooks) written(path string) bool { return h.Written != nil && h.Written(path) }

// Validate refuses a router that had a registration error (an invalid
// or duplicate name), which Register also returned: Config.Validate calls
// it, so New refuses the router before creating anything. The error's
// text has no "ipc: " prefix. A nil router passes.
func Validate(r *ipc.Router) error {
	if r == nil {
		return nil
	}
	if err := r.Err(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "ipc: "))
	}
	return nil
}

// Binary is this program's binary, fully resolved: the shims run it.
func Binary() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("ipc: this program's binary: %w", err)
	}
	r, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("ipc: this program's binary %q: %w", exe, paths.Bare(err))
	}
	return r, nil
}

// Start makes the directory, listens on the socket, writes the shims and
// serves the router. The caller adds what the sandbox needs to its
// configuration: [Server.ShimDir] and o.Binary readable and executable,
// [Server.Socket] connectable. On error nothing is left behind.
func Start(o Options) (*Server, error) {
	dir, own, err := makeDir(o)
	if err != nil {
		return nil, err
	}
	st := &Server{dir: dir, own: own, socket: filepath.Join(dir, socketName), shims: filepath.Join(dir, shimDirName), binary: o.Binary}
	fail := func(err error) (*Server, error) {
		st.Close()
		if !own {
			_ = os.RemoveAll(dir)
		}
		return nil, err
	}
	if err := writeShims(st.shims, o.Binary, o.Router.Commands()); err != nil {
		return fail(err)
	}
	l, err := ipc.Listen(st.socket)
	if err != nil {
		return fail(fmt.Errorf("ipc: %s", strings.TrimPrefix(err.Error(), "ipc: ")))
	}
	st.server = &ipc.Server{Router: o.Router, SandboxID: o.SandboxID}
	st.serveErr = make(chan error, 1)
	go func() { st.serveErr <- st.server.Serve(l) }()
	return st, nil
}

// makeDir makes the 0700 IPC directory (own: Close removes it, not
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
func makeDir(o Options) (dir string, own bool, err error) {
	if o.StateDir == "" {
		return "", false, errors.New("ipc: the sandbox has no state directory")
	}
	fits := func(d string) bool { return len(filepath.Join(d, socketName)) <= ipc.MaxSocketPath }
	if !o.Permissive {
		for _, base := range bases() {
			if o.Hooks.written(base) || paths.UnderAny(base, []string{o.WorkDir}) {
				continue
			}
			sweepOnce(base) // dirs_unix.go: what a crash left
			if d, err := os.MkdirTemp(base, "moat-"+o.SandboxID+"-ipc-"); err == nil {
				if fits(d) {
					return d, true, nil
				}
				_ = os.Remove(d)
			}
		}
	}
	dir = filepath.Join(o.StateDir, "ipc")
	if fits(dir) && !dirWritable(o.Permissive, dir) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", false, fmt.Errorf("ipc: %w", err)
		}
		return dir, false, nil
	}
	base, err := filepath.EvalSymlinks("/tmp")
	if err != nil {
		return "", false, fmt.Errorf("ipc: /tmp: %w", paths.Bare(err))
	}
	dir, err = os.MkdirTemp(base, "moat-"+o.SandboxID+"-ipc-")
	if err != nil {
		return "", false, fmt.Errorf("ipc: %w", err)
	}
	if !fits(dir) {
		_ = os.Remove(dir)
		return "", false, fmt.Errorf("ipc: no directory short enough for a Unix socket address: %q", dir)
	}
	return dir, true, nil
}

// dirWritable reports whether the sandbox could write dir: at the
// permissive level everything is writable but the shared temp
// directories, which stay read-only.
func dirWritable(permissive bool, dir string) bool {
	if !permissive {
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

// Close stops the server, waiting for running handlers, and removes the
// socket, the shims and the directory when the state directory does not
// hold it (the sandbox's Close removes that after). Nil-safe and
// idempotent.
func (st *Server) Close() error {
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
		return fmt.Errorf("ipc: %w", err)
	}
	return nil
}

// Env is what IPC adds to an environment whose PATH is path: the shims'
// directory first on PATH, whatever else path holds, and
// MOAT_IPC_ENDPOINT. Nil for a nil Server.
func (st *Server) Env(path string) []string {
	if st == nil {
		return nil
	}
	dirs := []string{st.shims}
	for _, d := range filepath.SplitList(path) {
		if d != st.shims {
			dirs = append(dirs, d)
		}
	}
	path = strings.Join(dirs, string(os.PathListSeparator))
	return []string{"PATH=" + path, ipc.EndpointEnv + "=" + st.socket}
}

// Socket is the path of the IPC socket, which MOAT_IPC_ENDPOINT names
// inside; "" for a nil Server.
func (st *Server) Socket() string {
	if st == nil {
		return ""
	}
	return st.socket
}

// ShimDir is the directory of the shims, first on the sandbox's PATH;
// "" for a nil Server.
func (st *Server) ShimDir() string {
	if st == nil {
		return ""
	}
	return st.shims
}
