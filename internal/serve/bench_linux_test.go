package serve

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// benchSession is a warm session of a test server, and its Session.
func benchSession(b *testing.B) (*testServer, string, *session.Session) {
	b.Helper()
	ts := newTestServer(b, serverOpts{})
	id := ts.create(session.CreateRequest{})
	s, err := ts.m.Get(id)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Run(context.Background(), session.RunRequest{Argv: []string{"true"}}, nil); err != nil {
		b.Fatal(err)
	}
	return ts, id, s
}

// A command in a warm session: through the library (Session.Run) and
// through the API (POST .../run over the socket, a kept-alive
// connection). Run with -count N: the two alternate.
func BenchmarkRunWarmSession(b *testing.B) {
	ts, id, s := benchSession(b)
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			r, err := s.Run(context.Background(), session.RunRequest{Argv: []string{"true"}}, nil)
			if err != nil || r.ExitCode != 0 {
				b.Fatal(r, err)
			}
		}
	})
	b.Run("api", func(b *testing.B) {
		for b.Loop() {
			if r := ts.do("POST", "/v1/sessions/"+id+"/run", `{"argv":["true"]}`); r.status != 200 {
				b.Fatal(r.status, string(r.body))
			}
		}
	})
}

// streamedCmd prints at once, then waits to be killed.
var streamedCmd = []string{"sh", "-c", "echo x; exec sleep 10"}

// firstOutputLibrary is the time from Session.Run to its first Output
// call; the command is then cancelled and reaped, untimed.
func firstOutputLibrary(b *testing.B, s *session.Session) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan time.Time, 1)
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		defer close(done)
		s.Run(ctx, session.RunRequest{Argv: streamedCmd}, func(session.Stream, []byte) {
			select {
			case first <- time.Now():
			default:
			}
		})
	}()
	d := (<-first).Sub(t0)
	cancel()
	<-done
	return d
}

// firstOutputAPI is the time from sending a streamed run to reading its
// first stdout event; the client then leaves, which kills the command.
func firstOutputAPI(b *testing.B, ts *testServer, id string, s *session.Session) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://moat/v1/sessions/"+id+"/run",
		strings.NewReader(`{"argv":["sh","-c","echo x; exec sleep 10"],"stream":true}`))
	resp, err := ts.unix.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	d := time.Since(t0)
	if err != nil || !strings.Contains(line, `"stdout"`) {
		b.Fatal(line, err)
	}
	cancel()
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	waitIdle(b, s)
	return d
}

// Time to the first output of a streamed command, through the library and
// over the API, interleaved: reported as lib-ns/first, api-ns/first and
// their ratio.
func BenchmarkTimeToFirstOutput(b *testing.B) {
	ts, id, s := benchSession(b)
	var lib, api time.Duration
	for b.Loop() {
		lib += firstOutputLibrary(b, s)
		api += firstOutputAPI(b, ts, id, s)
	}
	n := float64(b.N)
	b.ReportMetric(float64(lib.Nanoseconds())/n, "lib-ns/first")
	b.ReportMetric(float64(api.Nanoseconds())/n, "api-ns/first")
	b.ReportMetric(float64(api)/float64(lib), "api/lib")
}

// waitIdle waits until the session is free for the next command (the
// cancelled one has been reaped).
func waitIdle(b *testing.B, s *session.Session) {
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
		if _, err := s.Run(context.Background(), session.RunRequest{Argv: []string{"true"}}, nil); err == nil {
			return
		}
	}
	b.Fatal("the session stayed busy")
}

// The same two paths interleaved in one loop, each iteration one command
// through each, reported as lib-ns/op, api-ns/op and their ratio api/lib
// (the target is at most 2).
func BenchmarkRunWarmSessionInterleaved(b *testing.B) {
	ts, id, s := benchSession(b)
	var lib, api time.Duration
	for b.Loop() {
		t0 := time.Now()
		if r, err := s.Run(context.Background(), session.RunRequest{Argv: []string{"true"}}, nil); err != nil || r.ExitCode != 0 {
			b.Fatal(r, err)
		}
		t1 := time.Now()
		if r := ts.do("POST", "/v1/sessions/"+id+"/run", `{"argv":["true"]}`); r.status != 200 {
			b.Fatal(r.status, string(r.body))
		}
		lib += t1.Sub(t0)
		api += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(lib.Nanoseconds())/n, "lib-ns/op")
	b.ReportMetric(float64(api.Nanoseconds())/n, "api-ns/op")
	b.ReportMetric(float64(api)/float64(lib), "api/lib")
}
