package escape_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
)

// TestSessionOutlivesLimits is a session a client forgets (idle) or keeps
// busy forever (lifetime), with a background process: once past its limit
// the session is closed and its processes are gone from the host. The
// control lifts the limit (an hour): at the same moment the session and
// its process are still there, so the probe can see them.
func TestSessionOutlivesLimits(t *testing.T) {
	type outcome struct {
		pids   []int
		closed bool
	}
	gone := func(o outcome) bool { return o.closed && len(o.pids) == 0 }
	for _, tc := range []struct {
		name string
		opt  func(limit time.Duration) session.Options
		busy bool // a call every 50 ms, so that only the lifetime can end it
	}{
		{"idle", func(d time.Duration) session.Options { return session.Options{IdleTimeout: d} }, false},
		{"lifetime", func(d time.Duration) session.Options { return session.Options{MaxLifetime: d} }, true},
	} {
		attack(t, tc.name, func(t *testing.T, lifted bool) outcome {
			limit := 500 * time.Millisecond
			if lifted {
				limit = time.Hour
			}
			m := sessionManager(t, tc.opt(limit))
			s, err := m.Create(context.Background(), session.CreateRequest{})
			if err != nil {
				t.Fatal(err)
			}
			marker := "5151." + strconv.Itoa(time.Now().Nanosecond())
			if _, err := s.Start(session.StartRequest{Argv: []string{"sh", "-c", "sleep " + marker + "; :"}}); err != nil {
				t.Fatal(err)
			}
			var seen []int
			for deadline := time.Now().Add(10 * time.Second); len(seen) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				seen = hostPIDsWithArg(t, marker)
			}
			if len(seen) == 0 {
				t.Fatal("the background sleep never showed on the host")
			}
			for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				if tc.busy {
					s.Procs()
				}
			}
			_, err = m.Get(s.ID())
			o := outcome{closed: sessionCode(err) == session.CodeNotFound}
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if o.pids = hostPIDsWithArg(t, marker); len(o.pids) == 0 || lifted {
					break
				}
			}
			return o
		}, gone)
	}
}
