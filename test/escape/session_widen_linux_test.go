package escape_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// TestSessionWidenRefused is a client asking a session for more than its
// named policy allows: write access to a directory the policy grants
// read-only. It must be refused (widen_refused) and nothing written. The
// control lifts the guarantee by having the policy grant the directory
// read-write: the very same request is then a narrowing, accepted, and
// the write lands.
func TestSessionWidenRefused(t *testing.T) {
	type outcome struct {
		code    string
		written bool
		detail  string
	}
	attack(t, "grant-write", func(t *testing.T, lifted bool) outcome {
		dir := t.TempDir()
		access := moat.READ
		if lifted {
			access |= moat.WRITE
		}
		p := sessionPolicy(t, func(r *policy.Result) { r.Grants = []moat.PathRequest{{Path: dir, Access: access}} })
		m := sessionManager(t, session.Options{Policies: []session.Policy{p}})
		s, err := m.Create(context.Background(), session.CreateRequest{Narrow: session.Narrowing{Grants: map[string]string{dir: "rw"}}})
		if err != nil {
			return outcome{code: sessionCode(err), detail: err.Error()}
		}
		r := sessionRun(t, s, "sh", "-c", "echo x > "+filepath.Join(dir, "planted"))
		_, statErr := os.Stat(filepath.Join(dir, "planted"))
		return outcome{written: statErr == nil, detail: r.String()}
	}, func(o outcome) bool { return o.code == session.CodeWiden && !o.written })

	// The other settings a client may only lower, each asked beyond the
	// policy (refused) and then within it (the control, accepted).
	base := sessionPolicy(t, func(r *policy.Result) {
		r.Config.Limits.Processes = 64
		r.Config.Isolation = moat.IsolationStrict
	})
	m := sessionManager(t, session.Options{Policies: []session.Policy{base}, MaxSessions: 16})
	for _, tc := range []struct {
		name          string
		wider, within session.Narrowing
	}{
		{"network", session.Narrowing{Network: "allow-list", AllowDomains: []string{"example.com"}}, session.Narrowing{Network: "deny"}},
		{"memory", session.Narrowing{Limits: session.NarrowLimits{MemoryBytes: 512 << 20}}, session.Narrowing{Limits: session.NarrowLimits{MemoryBytes: 128 << 20}}},
		{"processes", session.Narrowing{Limits: session.NarrowLimits{Processes: 65}}, session.Narrowing{Limits: session.NarrowLimits{Processes: 63}}},
		{"isolation", session.Narrowing{Isolation: "default"}, session.Narrowing{Isolation: "strict"}},
		{"grant", session.Narrowing{Grants: map[string]string{"/etc": "r"}}, session.Narrowing{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Create(context.Background(), session.CreateRequest{Narrow: tc.wider})
			if sessionCode(err) != session.CodeWiden {
				t.Errorf("attack: asking for more (%+v): %v; want widen_refused", tc.wider, err)
			}
			s, err := m.Create(context.Background(), session.CreateRequest{Narrow: tc.within})
			if err != nil {
				t.Fatalf("control: asking for less (%+v): %v", tc.within, err)
			}
			if r := sessionRun(t, s, "true"); r.Code != 0 {
				t.Errorf("control: a command in the narrowed session: %v", r)
			}
			s.Close()
		})
	}
}
