package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// Slow clients that drip their headers do not keep others from being
// served, and are cut off after ReadHeaderTimeout.
func TestSlowClientsDoNotBlockOthers(t *testing.T) {
	ts := newTestServer(t, serverOpts{tune: func(hs *http.Server) { hs.ReadHeaderTimeout = 500 * time.Millisecond }})
	var slow []net.Conn
	for range 50 {
		c, err := net.Dial("unix", ts.ls.Socket)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /v1/policies HTTP/1.1\r\nHost: moat\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		slow = append(slow, c)
	}
	stop := make(chan struct{})
	go func() { // drip one byte a connection every 100 ms
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for _, c := range slow {
				c.Write([]byte("a"))
			}
		}
	}()
	defer close(stop)
	for i := range 5 {
		if r := ts.do("GET", "/v1/policies", nil); r.status != 200 {
			t.Fatalf("request %d beside slow clients: %d %s", i, r.status, r.body)
		}
	}
	for i, c := range slow {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.ReadAll(c) // the server closes it: EOF (ReadAll's nil) or a reset
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("slow connection %d is still open 10 s after its header timeout", i)
		}
	}
}

// A burst of 1000 session creations: MaxSessions are made, the rest are
// answered 429 too_many_sessions, the server stays up with bounded
// memory, and everything is closed after.
func TestCreateBurst(t *testing.T) {
	const max, burst = 8, 1000
	ts := newTestServer(t, serverOpts{session: session.Options{MaxSessions: max, MaxTotalMemory: 1 << 50}})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	c := unixClient(ts.ls.Socket)
	var mu sync.Mutex
	count := map[string]int{}
	var wg sync.WaitGroup
	for range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", "http://moat/v1/sessions", strings.NewReader(`{}`))
			resp, err := c.Do(req)
			key := ""
			if err != nil {
				key = "transport error: " + err.Error()
			} else {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				key = fmt.Sprint(resp.StatusCode)
				if resp.StatusCode != 201 {
					key += " " + (reply{body: body}).errCode()
				}
			}
			mu.Lock()
			count[key]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if count["201"] != max || count["429 too_many_sessions"] != burst-max || len(count) != 2 {
		t.Errorf("burst of %d with MaxSessions %d: %v", burst, max, count)
	}
	if r := ts.do("GET", "/v1/sessions", nil); r.status != 200 || strings.Count(string(r.body), `"id"`) != max {
		t.Errorf("after the burst: %d %s", r.status, trimmed(string(r.body)))
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 64<<20 {
		t.Errorf("the heap grew by %d MiB over the burst", grew>>20)
	}
	for _, info := range ts.m.List() {
		if r := ts.do("DELETE", "/v1/sessions/"+info.ID, nil); r.status != 200 {
			t.Errorf("close %s: %d %s", info.ID, r.status, r.body)
		}
	}
	if l := ts.m.List(); len(l) != 0 {
		t.Errorf("%d sessions left after closing them all", len(l))
	}
	c.CloseIdleConnections()
	ts.unix.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutines+10 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines+10 {
		t.Errorf("%d goroutines after the burst, %d before", n, goroutines)
	}
}

// pidsRunning lists host pids whose command line is argv exactly.
func pidsRunning(argv ...string) []string {
	want := []byte(strings.Join(argv, "\x00") + "\x00")
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Equal(b, want) {
			out = append(out, e.Name())
		}
	}
	return out
}

// A client that disconnects mid-stream leaves no process: the request's
// context ends and the command's process tree is killed.
func TestStreamDisconnectKillsCommand(t *testing.T) {
	ts := newTestServer(t, serverOpts{})
	id := ts.create(session.CreateRequest{})
	marker := fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, time.Now().UnixNano()%1000)
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := fmt.Sprintf(`{"argv":["sh","-c","sleep %s & echo ready; wait"],"stream":true}`, marker)
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://moat/v1/sessions/"+id+"/run", strings.NewReader(body))
			if sse {
				req.Header.Set("Accept", "text/event-stream")
			}
			resp, err := ts.unix.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			var seen []string
			for sc.Scan() && !strings.Contains(sc.Text(), "ready") {
				seen = append(seen, sc.Text())
			}
			if sc.Err() != nil || len(seen) > 1 {
				t.Fatalf("before ready: %q %v", seen, sc.Err())
			}
			var pids []string
			for start := time.Now(); len(pids) == 0 && time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
				pids = pidsRunning("sleep", marker)
			}
			if len(pids) != 1 {
				t.Fatalf("control: the command's grandchild is not seen running (%v)", pids)
			}
			cancel()
			resp.Body.Close()
			deadline := time.Now().Add(15 * time.Second)
			for len(pidsRunning("sleep", marker)) > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if left := pidsRunning("sleep", marker); len(left) > 0 {
				t.Errorf("pid %v still runs 15 s after the client left", left)
			}
		})
	}
	// Control: the session still runs commands.
	if r := ts.do("POST", "/v1/sessions/"+id+"/run", `{"argv":["true"]}`); r.status != 200 {
		t.Errorf("after the disconnects: %d %s", r.status, r.body)
	}
}
