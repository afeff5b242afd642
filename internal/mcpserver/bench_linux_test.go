package mcpserver

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/moat-sandbox/moat/internal/session"
)

// progressClient connects to srv with a client that sends each progress
// notification's time to got.
func progressClient(b testing.TB, srv *Server, got chan<- time.Time) *mcp.ClientSession {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case got <- time.Now():
			default:
			}
		},
	})
	cs, err := cl.Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// TestRunCommandStreams: with a progress token, output arrives as progress
// notifications before the result.
func TestRunCommandStreams(t *testing.T) {
	got := make(chan time.Time, 16)
	cs := progressClient(t, testServer(t), got)
	p := &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"argv": []string{"sh", "-c", "echo first; sleep 0.3; echo second"}}}
	p.SetProgressToken("t1")
	start := time.Now()
	res, err := cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("run: %v %s", err, text(res))
	}
	end := time.Now()
	select {
	case first := <-got:
		if !first.Before(end) || first.Sub(start) > end.Sub(start)-100*time.Millisecond {
			t.Errorf("the first output came %v after the start, the result %v", first.Sub(start), end.Sub(start))
		}
	default:
		t.Fatal("no progress notification")
	}
	if o := structured[RunOutput](t, res); o.Stdout.Text != "first\nsecond\n" {
		t.Errorf("result: %+v", o)
	}
}

// BenchmarkFirstOutput measures the time to the first output of `echo hi`
// in a warm session: through the library (session.Run's Output), over MCP
// in memory with a progress token (the first progress notification), and
// the whole MCP result. One run interleaves them: compare the ratios.
func BenchmarkFirstOutput(b *testing.B) {
	srv := testServer(b)
	got := make(chan time.Time, 1)
	cs := progressClient(b, srv, got)
	// Warm the session through MCP, then take it for the library path.
	ok[RunOutput](b, cs, "run_command", map[string]any{"argv": []string{"true"}})
	var sess *session.Session
	for _, c := range srv.conns {
		sess = c.sess
	}
	argv := []string{"echo", "hi"}
	b.Run("library", func(b *testing.B) {
		var total time.Duration
		for b.Loop() {
			start := time.Now()
			var first time.Time
			_, err := sess.Run(context.Background(), session.RunRequest{Argv: argv}, func(session.Stream, []byte) {
				if first.IsZero() {
					first = time.Now()
				}
			})
			if err != nil || first.IsZero() {
				b.Fatalf("run: %v", err)
			}
			total += first.Sub(start)
		}
		b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-first-output")
	})
	b.Run("mcp-progress", func(b *testing.B) {
		var total time.Duration
		for b.Loop() {
			p := &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"argv": argv}}
			p.SetProgressToken("b")
			start := time.Now()
			if _, err := cs.CallTool(context.Background(), p); err != nil {
				b.Fatal(err)
			}
			select {
			case first := <-got:
				total += first.Sub(start)
			case <-time.After(5 * time.Second):
				b.Fatal("no progress notification")
			}
		}
		b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-first-output")
	})
	b.Run("mcp-result", func(b *testing.B) {
		var total time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"argv": argv}}); err != nil {
				b.Fatal(err)
			}
			total += time.Since(start)
		}
		b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-first-output")
	})
}
