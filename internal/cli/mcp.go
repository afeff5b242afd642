package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/mcpserver"
	"github.com/moat-sandbox/moat/internal/session"
)

// newMCPCmd builds "moat mcp": an MCP server over stdio (the default) or
// streamable HTTP on loopback, serving one policy fixed at start.
func newMCPCmd(std stdio) *cobra.Command {
	var policyFile, listen string
	cmd := &cobra.Command{
		Use:   "mcp [--policy FILE] [--listen 127.0.0.1:PORT]",
		Short: "Serve a sandbox to an MCP client (stdio, or streamable HTTP on loopback)",
		Long: "moat mcp serves one policy, fixed at start (--policy FILE: a TOML config or a JSON policy document; none means moat run's defaults). " +
			"Each MCP connection gets its own sandbox, made on its first tool call and closed when the connection ends. " +
			"No tool changes the policy, applies a workspace or restores from the quarantine.\n\n" +
			"Over --listen, every request needs the bearer token written (0600) to the file named on the ready line, and a loopback Host and Origin.",
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			return runMCP(std, policyFile, listen)
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy", "", "the policy `FILE` to serve (TOML config or .json policy document); none: moat run's defaults")
	cmd.Flags().StringVar(&listen, "listen", "", "serve streamable HTTP on this loopback `ADDRESS` (127.0.0.1:PORT) instead of stdio")
	return cmd
}

// runMCP loads the policy, then serves until the client or a signal ends it.
func runMCP(std stdio, policyFile, listen string) error {
	var specs []string
	if policyFile != "" {
		specs = []string{policyFile}
	}
	if listen != "" {
		if err := mcpserver.CheckListen(listen); err != nil {
			return usagef("--listen %q: %s", listen, err)
		}
	}
	pols, err := loadServePolicies(specs)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcpVenvs(ctx, std, pols); err != nil {
		return err
	}
	var ln net.Listener
	opt := session.Options{Policies: pols, Log: std.err}
	if listen != "" {
		ln, err = net.Listen("tcp", listen)
		if err != nil {
			return failf("--listen %q: %w", listen, err)
		}
		defer ln.Close()
		// No session's command may connect to the server's own port, nor
		// bind it on another address.
		opt.DenyTCPPorts = []uint16{uint16(ln.Addr().(*net.TCPAddr).Port)}
	}
	mgr, err := session.NewManager(opt)
	if err != nil {
		return fail(err)
	}
	defer mgr.Shutdown()
	srv, err := mcpserver.New(mcpserver.Options{Manager: mgr, Policy: pols[0].Name, Version: moduleVersion(), Log: std.err})
	if err != nil {
		return fail(err)
	}
	if ln == nil {
		err := srv.Run(ctx, &mcp.IOTransport{Reader: std.in, Writer: nopCloser{std.out}})
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			return fail(err)
		}
		return nil
	}
	return serveMCPHTTP(ctx, std, srv, ln)
}

// mcpVenvs builds, once at start, the venv of each policy whose [python]
// table says anything, as moat python would, and gives it to the policy's
// sandboxes, so that run_python's interpreter is the venv's; a policy
// without one runs python3 from the sandbox's PATH.
func mcpVenvs(ctx context.Context, std stdio, pols []session.Policy) error {
	for i := range pols {
		py := pols[i].Result.Python
		if reflect.ValueOf(py).IsZero() {
			continue
		}
		vc, err := py.VenvConfig()
		if err != nil {
			return usagef("policy %q: %s", pols[i].Name, err)
		}
		v, err := (&moat.VenvManager{Progress: venvProgress(std.err)}).Create(ctx, vc)
		if err != nil {
			return fail(fmt.Errorf("policy %q: venv: %w", pols[i].Name, err))
		}
		pols[i].Result.Config.Python = &moat.PythonConfig{Venv: v.Path, AllowPipInstall: py.AllowPip()}
	}
	return nil
}

// serveMCPHTTP serves srv on ln with a fresh token until ctx ends.
func serveMCPHTTP(ctx context.Context, std stdio, srv *mcpserver.Server, ln net.Listener) error {
	defer srv.CloseAll()
	port := ln.Addr().(*net.TCPAddr).Port
	dir, err := mcpserver.TokenDir("")
	if err != nil {
		return fail(err)
	}
	mcpserver.SweepTokens(dir) // what servers killed with -9 left
	token, err := mcpserver.NewToken()
	if err != nil {
		return fail(err)
	}
	tokenFile, err := mcpserver.WriteToken(dir, port, token)
	if err != nil {
		return fail(err)
	}
	defer os.Remove(tokenFile)
	hs := &http.Server{Handler: srv.HTTPHandler(port, token), ReadHeaderTimeout: 10 * time.Second}
	ready, _ := json.Marshal(map[string]any{"url": fmt.Sprintf("http://%s%s", ln.Addr(), mcpserver.HTTPPath), "token_file": tokenFile, "pid": os.Getpid()})
	fmt.Fprintln(std.out, string(ready))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = hs.Shutdown(sctx)
		cancel()
		err = nil
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(err)
	}
	return nil
}

// nopCloser keeps the SDK from closing moat's standard output.
type nopCloser struct{ *os.File }

func (nopCloser) Close() error { return nil }
