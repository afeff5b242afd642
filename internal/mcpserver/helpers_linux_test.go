package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// testServer serves moat's library defaults (strict isolation, no
// network, build mode off) with layers over them, on a real session core.
func testServer(t testing.TB, layers ...policy.Layer) *Server {
	t.Helper()
	r, err := policy.Merge(layers...)
	if err != nil {
		t.Fatalf("policy.Merge: %v", err)
	}
	if r.Config.Limits.MemoryBytes == 0 {
		r.Config.Limits.MemoryBytes = 256 << 20
	}
	mgr, err := session.NewManager(session.Options{Policies: []session.Policy{{Name: "default", Source: "test", Result: r}}, WarmPool: -1})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	t.Cleanup(mgr.Shutdown)
	srv, err := New(Options{Manager: mgr, Version: "test"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(srv.CloseAll)
	return srv
}

// connect opens an in-memory MCP connection to srv with the SDK's own
// client.
func connect(t testing.TB, srv *Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "moat-test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// call calls a tool; a protocol error fails the test.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured content.
func ok[T any](t testing.TB, cs *mcp.ClientSession, name string, args any) T {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): IsError: %s", name, args, text(res))
	}
	return structured[T](t, res)
}

// structured decodes a result's structured content.
func structured[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	js, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatalf("structured content %s: %v", js, err)
	}
	return v
}

// text is a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// errorOf decodes a failed result's error and checks IsError.
func errorOf(t testing.TB, res *mcp.CallToolResult) ErrorInfo {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want IsError, got %s", text(res))
	}
	return structured[struct {
		Error ErrorInfo `json:"error"`
	}](t, res).Error
}

// mcpCallParams is the SDK's call parameters.
type mcpCallParams = mcp.CallToolParams

// schemaJSON is a schema as JSON text.
func schemaJSON(t testing.TB, s any) string {
	t.Helper()
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}
