package serve

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/moat-sandbox/moat"
)

// Names of the server's files in its directory.
const (
	socketName = "serve.sock"
	tokenName  = "serve.token"
)

// ListenOptions say where to listen. The zero value is the default socket
// and no TCP.
type ListenOptions struct {
	// Socket is the Unix socket's path; empty means DefaultSocket.
	Socket string
	// TCP is a loopback address (127.0.0.1:PORT, [::1]:PORT); empty
	// means none. Port 0 picks a free one.
	TCP string
	// Token is written to the token file beside the socket; required.
	Token string
	// Log receives a line per refused connection; nil discards.
	Log io.Writer
}

// Listeners are the server's listening sockets and files. The zero value
// listens nowhere.
type Listeners struct {
	// Socket and TokenFile are absolute paths.
	Socket    string
	TokenFile string
	// TCPAddr is the loopback address listened on; empty when none.
	TCPAddr string
	// TCPPort is its port; 0 when none.
	TCPPort uint16

	unix net.Listener
	tcp  net.Listener
}

// DefaultSocket is $XDG_RUNTIME_DIR/moat/serve.sock, or with no runtime
// directory <moat state root>/serve/serve.sock.
func DefaultSocket() (string, error) {
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
		return filepath.Join(rt, "moat", socketName), nil
	}
	state, err := moat.StateDir()
	if err != nil {
		return "", fmt.Errorf("no runtime directory and no state directory: %w", err)
	}
	return filepath.Join(state, "serve", socketName), nil
}

// Listen opens the Unix socket (0600, in a 0700 directory of ours that is
// no link and that no one else can reach; a stale socket from a killed
// server is swept, a live one refused), writes the token file beside it
// (0600), and opens the loopback TCP listener when asked.
func Listen(opt ListenOptions) (*Listeners, error) {
	if opt.Token == "" {
		return nil, errors.New("serve: no token")
	}
	sock := opt.Socket
	explicit := sock != ""
	if !explicit {
		var err error
		if sock, err = DefaultSocket(); err != nil {
			return nil, err
		}
	}
	sock, err := filepath.Abs(sock)
	if err != nil {
		return nil, fmt.Errorf("socket %q: %w", sock, err)
	}
	dir := filepath.Dir(sock)
	if dir == "/tmp" || dir == filepath.Clean(os.TempDir()) {
		return nil, &PlaceError{fmt.Errorf("socket %q: not directly in %s, which every user can write; name a private directory", sock, dir)}
	}
	if !explicit {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("socket directory %q: %w", dir, err)
		}
	}
	if err := checkPrivateDir(dir, !explicit); err != nil {
		return nil, &PlaceError{fmt.Errorf("socket directory %q: %w", dir, err)}
	}
	l := &Listeners{Socket: sock, TokenFile: filepath.Join(dir, tokenName)}
	if err := sweepStale(sock, l.TokenFile); err != nil {
		return nil, err
	}
	ul, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("socket %q: %w", sock, err)
	}
	l.unix = &peerListener{Listener: ul, log: opt.Log}
	if err := os.Chmod(sock, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("socket %q: %w", sock, err)
	}
	if err := writeToken(l.TokenFile, opt.Token); err != nil {
		l.Close()
		return nil, err
	}
	if opt.TCP != "" {
		if err := l.listenTCP(opt.TCP); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// CheckLoopback refuses a --listen address that is not a loopback IP
// literal with a port.
func CheckLoopback(addr string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q: want a loopback address and port like 127.0.0.1:8600", addr)
	}
	if !ap.Addr().IsLoopback() || ap.Addr().Zone() != "" {
		return netip.AddrPort{}, fmt.Errorf("%q: only a loopback address (127.0.0.1, ::1) may be listened on", addr)
	}
	return ap, nil
}

func (l *Listeners) listenTCP(addr string) error {
	ap, err := CheckLoopback(addr)
	if err != nil {
		return err
	}
	tl, err := net.Listen("tcp", ap.String())
	if err != nil {
		return fmt.Errorf("listen %q: %w", addr, err)
	}
	l.tcp = tl
	got := tl.Addr().(*net.TCPAddr)
	l.TCPAddr = got.String()
	l.TCPPort = uint16(got.Port)
	return nil
}

// Unix and TCP are the listeners to serve; TCP is nil when none.
func (l *Listeners) Unix() net.Listener { return l.unix }

// TCP is the loopback listener, nil when none was asked for.
func (l *Listeners) TCP() net.Listener { return l.tcp }

// Close closes the listeners and removes the socket and the token file.
func (l *Listeners) Close() error {
	var errs []error
	if l.unix != nil {
		errs = append(errs, ignoreClosed(l.unix.Close()))
	}
	if l.tcp != nil {
		errs = append(errs, ignoreClosed(l.tcp.Close()))
	}
	for _, p := range []string{l.Socket, l.TokenFile} {
		if p == "" {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// sweepStale removes a socket a killed server left, and its token file,
// when nothing answers on it; a live server is an error naming its pid.
func sweepStale(sock, token string) error {
	fi, err := os.Lstat(sock)
	if errors.Is(err, os.ErrNotExist) {
		return removeToken(token)
	}
	if err != nil {
		return fmt.Errorf("socket %q: %w", sock, err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		return &PlaceError{fmt.Errorf("socket %q: exists and is not a socket; remove it or name another --socket", sock)}
	}
	c, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err == nil {
		pid := peerPID(c)
		c.Close()
		if pid > 0 {
			return fmt.Errorf("socket %q: a server (pid %d) is listening on it already", sock, pid)
		}
		return fmt.Errorf("socket %q: a server is listening on it already", sock)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("socket %q: neither live nor clearly stale: %w", sock, err)
	}
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stale socket %q: %w", sock, err)
	}
	return removeToken(token)
}

func removeToken(token string) error {
	if err := os.Remove(token); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stale token file %q: %w", token, err)
	}
	return nil
}

// writeToken writes the token to a new file, 0600, never through a link.
func writeToken(path, token string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return fmt.Errorf("token file %q: %w", path, err)
	}
	_, werr := f.WriteString(token + "\n")
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(path)
		return fmt.Errorf("token file %q: %w", path, err)
	}
	return nil
}

// PlaceError refuses the socket's place: a path directly in /tmp, a
// directory that is a link, not ours or open to others, a file that is no
// socket. The zero value is not used.
type PlaceError struct{ err error }

func (e *PlaceError) Error() string { return e.err.Error() }
func (e *PlaceError) Unwrap() error { return e.err }
