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
// in a warm session, interleaved in each iteration so that the machine's
// load falls on all three alike: through the library (session.Run's
// Output), over MCP in memory with a progress token (the first progress
// notification), and the whole MCP result without one. It reports each in
// µs and the ratios to the library.
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
	var lib, prog, whole time.Duration
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
		lib += first.Sub(start)

		p := &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"argv": argv}}
		p.SetProgressToken("b")
		start = time.Now()
		if _, err := cs.CallTool(context.Background(), p); err != nil {
			b.Fatal(err)
		}
		select {
		case first := <-got:
			prog += first.Sub(start)
		case <-time.After(5 * time.Second):
			b.Fatal("no progress notification")
		}

		start = time.Now()
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"argv": argv}}); err != nil {
			b.Fatal(err)
		}
		whole += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(lib.Microseconds())/n, "µs-library")
	b.ReportMetric(float64(prog.Microseconds())/n, "µs-mcp-progress")
	b.ReportMetric(float64(whole.Microseconds())/n, "µs-mcp-result")
	b.ReportMetric(float64(prog)/float64(lib), "x-progress/library")
	b.ReportMetric(float64(whole)/float64(lib), "x-result/library")
}
