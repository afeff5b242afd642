package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/moat-sandbox/moat/internal/serve"
	"github.com/moat-sandbox/moat/internal/session"
	"github.com/spf13/cobra"
)

// serveFlags are moat serve's settings.
type serveFlags struct {
	policies       []string
	socket         string
	listen         string
	maxSessions    int
	maxTotalMemory string
	sessionMemory  string
	idleTimeout    time.Duration
	maxLifetime    time.Duration
	warmPool       int
	openapi        bool
}

// readyLine is what moat serve prints to stdout, once, when it answers.
type readyLine struct {
	Socket    string `json:"socket"`
	TokenFile string `json:"token_file"`
	Listen    string `json:"listen"`
	PID       int    `json:"pid"`
}

// newServeCmd builds "moat serve": the HTTP/JSON API for sessions.
func newServeCmd(std stdio) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--policy NAME=FILE]... [--socket PATH] [--listen 127.0.0.1:PORT]",
		Short: "Serve sessions over an HTTP/JSON API (docs/serve.md)",
		Long: `moat serve keeps long-lived sandboxes (sessions) for agents and serves
them over HTTP/JSON on a Unix socket, by default $XDG_RUNTIME_DIR/moat/serve.sock
(mode 0600, in a 0700 directory). Only a process of your uid in your user
namespace may connect: no sandboxed process with namespaces can. A bearer token
(32 random bytes, hex) is written 0600 to moat's state directory (serve/serve.token,
which no sandbox sees; the ready line names it); it is
required on loopback TCP (--listen), and on the socket while a session without
the socket guard (host network, or no user namespace) lives.

Each --policy NAME=FILE names a policy, read once and pinned: a TOML config
(moat run's --config) or a JSON policy document. A client picks one by name
and may only narrow it. Without --policy, one policy "default" serves moat
run's defaults.

When ready it prints one JSON line to stdout:
{"socket":...,"token_file":...,"listen":...,"pid":...}. SIGINT or SIGTERM
closes every session and removes the socket and the token file.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(std, f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.policies, "policy", nil, "a named policy, NAME=FILE (TOML config or JSON policy document); repeatable")
	fl.StringVar(&f.socket, "socket", "", "the Unix socket's path (default $XDG_RUNTIME_DIR/moat/serve.sock)")
	fl.StringVar(&f.listen, "listen", "", "also listen on this loopback TCP address (token always required)")
	fl.IntVar(&f.maxSessions, "max-sessions", 64, "the most live sessions")
	fl.StringVar(&f.maxTotalMemory, "max-total-memory", "", "bound on the sum of sessions' memory limits (default the host's memory)")
	fl.StringVar(&f.sessionMemory, "session-memory", "", "memory limit of a session whose policy sets none (default an eighth of the host's memory, at least 512M)")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 15*time.Minute, "close a session unused this long")
	fl.DurationVar(&f.maxLifetime, "max-lifetime", 8*time.Hour, "close a session this long after it was made")
	fl.IntVar(&f.warmPool, "warm-pool", 1, "ready sandboxes kept per policy (0: none)")
	fl.BoolVar(&f.openapi, "openapi", false, "print the API's OpenAPI 3.1 document and exit")
	return cmd
}

// options checks the flags into the session core's options (no policies).
func (f serveFlags) options() (session.Options, error) {
	var opt session.Options
	if f.maxSessions < 1 {
		return opt, usagef("--max-sessions %d: want at least 1", f.maxSessions)
	}
	if f.idleTimeout <= 0 || f.maxLifetime <= 0 {
		return opt, usagef("--idle-timeout and --max-lifetime: want a positive duration like 15m")
	}
	if f.warmPool < 0 {
		return opt, usagef("--warm-pool %d: want 0 or more", f.warmPool)
	}
	opt.MaxSessions, opt.IdleTimeout, opt.MaxLifetime = f.maxSessions, f.idleTimeout, f.maxLifetime
	opt.WarmPool = f.warmPool
	if f.warmPool == 0 {
		opt.WarmPool = -1 // the core's "none"
	}
	if f.maxTotalMemory != "" {
		n, err := parseSize(f.maxTotalMemory)
		if err != nil || n <= 0 {
			return opt, usagef("--max-total-memory %q: want a size like 8G", f.maxTotalMemory)
		}
		opt.MaxTotalMemory = n
	}
	if f.sessionMemory != "" {
		n, err := parseSize(f.sessionMemory)
		if err != nil || n <= 0 {
			return opt, usagef("--session-memory %q: want a size like 1G", f.sessionMemory)
		}
		opt.SessionMemory = n
	}
	if f.listen != "" {
		if _, err := serve.CheckLoopback(f.listen); err != nil {
			return opt, usagef("--listen %v", err)
		}
	}
	return opt, nil
}

func runServe(std stdio, f serveFlags) error {
	if f.openapi {
		_, err := std.out.Write(serve.OpenAPI)
		return err
	}
	opt, err := f.options()
	if err != nil {
		return err
	}
	policies, err := loadServePolicies(f.policies)
	if err != nil {
		return err
	}
	opt.Policies, opt.Log = policies, std.err
	if err := checkSocketPlace(f.socket); err != nil {
		return err
	}
	token, err := serve.NewToken()
	if err != nil {
		return failf("serve: the token: %w", err)
	}
	ls, err := serve.Listen(serve.ListenOptions{Socket: f.socket, TCP: f.listen, Token: token, Log: std.err})
	if err != nil {
		var place *serve.PlaceError
		if errors.As(err, &place) && f.socket != "" {
			return usagef("--socket %q: %v", f.socket, err)
		}
		return failf("serve: %w", err)
	}
	defer ls.Close()
	if ls.TCPPort != 0 {
		// Every session's commands are denied a TCP connect to this port
		// (moat.Config.DenyTCPConnect: Landlock, even under host network).
		opt.DenyTCPPorts = []uint16{ls.TCPPort}
	}
	m, err := session.NewManager(opt)
	if err != nil {
		return failf("serve: %w", err)
	}
	defer m.Shutdown()
	srv, err := serve.New(serve.Options{Manager: m, Token: token, Log: std.err})
	if err != nil {
		return failf("serve: %w", err)
	}
	hs := srv.HTTPServer()
	errc := make(chan error, 2)
	for _, l := range []net.Listener{ls.Unix(), ls.TCP()} {
		if l != nil {
			go func() { errc <- hs.Serve(l) }()
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	line, _ := json.Marshal(readyLine{Socket: ls.Socket, TokenFile: ls.TokenFile, Listen: ls.TCPAddr, PID: os.Getpid()})
	fmt.Fprintf(std.out, "%s\n", line)
	fmt.Fprintf(std.err, "moat serve: listening on %s\n", ls.Socket)
	var serveErr error
	select {
	case s := <-sig:
		fmt.Fprintf(std.err, "moat serve: %v: closing every session\n", s)
	case serveErr = <-errc:
	}
	_ = hs.Close() // stops accepting and drops connections; streams' contexts end, killing their commands
	m.Shutdown()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return failf("serve: %w", serveErr)
	}
	return nil
}

// checkSocketPlace refuses a socket directory that a sandbox of an earlier
// run could write (the record of writable places in moat's state
// directory): a sandbox that can write there can move the socket aside and
// listen in its place, and take the token a client sends. The default
// directory is hidden from every sandbox and refused as a place.
func checkSocketPlace(socket string) error {
	sock := socket
	if sock == "" {
		var err error
		if sock, err = serve.DefaultSocket(); err != nil {
			return nil // Listen says why
		}
	}
	abs, err := filepath.Abs(sock)
	if err != nil {
		return nil // Listen says why
	}
	store, err := hostStore() // hostinputs.go
	if err != nil {
		return err
	}
	place, err := store.PastPlace(filepath.Dir(abs))
	if err != nil {
		return failf("serve: the socket's directory: %w", err)
	}
	if place != "" {
		return usagef("--socket %q: its directory lies in %s, which a sandbox of an earlier run could write (it could listen in the server's place); name a directory no sandbox was given", sock, place)
	}
	return nil
}
