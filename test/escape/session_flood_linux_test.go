package escape_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// floodCap is the output a session keeps per stream in the flood tests.
const floodCap = 1 << 20

// heapPeak samples the heap in use every 20 ms while f runs and returns
// how far it rose above where it started.
func heapPeak(f func()) uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak.Load()
}

// TestSessionOutputFlood is a command that writes gigabytes: the server
// keeps at most OutputCap of it, and its heap stays bounded. The control
// lifts the bound (an OutputCap as large as a smaller flood): the same
// probe then sees the server hold all of it, so the measure can fail.
func TestSessionOutputFlood(t *testing.T) {
	type outcome struct {
		kept      int
		truncated bool
		heap      uint64
		detail    string
	}
	bounded := func(o outcome) bool { return o.kept <= floodCap && o.heap < 64<<20 }
	flood := func(t *testing.T, lifted bool) (capacity int, bytes string) {
		if lifted {
			return 256 << 20, "256M"
		}
		return floodCap, "2G"
	}
	attack(t, "run", func(t *testing.T, lifted bool) outcome {
		capacity, n := flood(t, lifted)
		m := sessionManager(t, session.Options{OutputCap: capacity})
		s, err := m.Create(context.Background(), session.CreateRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var res session.RunResult
		var streamed int64
		heap := heapPeak(func() {
			res, err = s.Run(context.Background(), session.RunRequest{Argv: []string{"head", "-c", n, "/dev/zero"}}, func(_ session.Stream, d []byte) { streamed += int64(len(d)) })
		})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("flood: %+v, %v", res, err)
		}
		if !lifted && (!res.StdoutTruncated || streamed != 2<<30) {
			t.Errorf("flood: truncated %v, streamed %d bytes; want all 2 GiB streamed, the result truncated", res.StdoutTruncated, streamed)
		}
		return outcome{kept: len(res.Stdout), truncated: res.StdoutTruncated, heap: heap, detail: fmt.Sprintf("streamed %d", streamed)}
	}, bounded)
	attack(t, "background", func(t *testing.T, lifted bool) outcome {
		capacity, n := flood(t, lifted)
		m := sessionManager(t, session.Options{OutputCap: capacity})
		s, err := m.Create(context.Background(), session.CreateRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out session.ProcOutput
		heap := heapPeak(func() {
			p, err := s.Start(session.StartRequest{Argv: []string{"sh", "-c", "head -c " + n + " /dev/zero; echo; echo the-end"}})
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if out, err = s.Output(p.ID, 0, 0); err != nil {
					t.Fatal(err)
				}
				if out.Proc.State == "exited" {
					break
				}
			}
		})
		if !strings.HasSuffix(string(out.Stdout.Data), "the-end\n") {
			t.Fatalf("the flood never ended: %+v", out.Proc)
		}
		if out.Stdout.Offset+int64(len(out.Stdout.Data)) != out.Stdout.Next || out.Stdout.Dropped != out.Stdout.Offset {
			t.Errorf("offsets: offset %d next %d dropped %d len %d", out.Stdout.Offset, out.Stdout.Next, out.Stdout.Dropped, len(out.Stdout.Data))
		}
		return outcome{kept: len(out.Stdout.Data), heap: heap, detail: fmt.Sprintf("next %d dropped %d", out.Stdout.Next, out.Stdout.Dropped)}
	}, bounded)
}
