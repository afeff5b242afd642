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

// TestSessionCrossRead is one session's command reading, and writing,
// another session's working directory, both of one policy of one server:
// the sandbox refuses both. The control lifts the guarantee with a policy
// that grants the victim's working directory: the same commands then
// reach it. A read of the attacker's own working directory works too.
func TestSessionCrossRead(t *testing.T) {
	m := sessionManager(t, session.Options{})
	victim, err := m.Create(context.Background(), session.CreateRequest{Name: "victim"})
	if err != nil {
		t.Fatal(err)
	}
	vdir := victim.Info().WorkDir
	if r := sessionRun(t, victim, "sh", "-c", "echo victim-secret > secret"); r.Code != 0 {
		t.Fatalf("victim: %v", r)
	}
	target := filepath.Join(vdir, "secret")
	attack(t, "read", func(t *testing.T, lifted bool) result {
		s := attacker(t, m, vdir, lifted)
		if r := sessionRun(t, s, "sh", "-c", "echo mine > own && cat own"); r.Stdout != "mine\n" {
			t.Fatalf("the attacker's own working directory: %v", r)
		}
		return sessionRun(t, s, "cat", target)
	}, func(r result) bool { return r.Stdout != "victim-secret\n" })
	attack(t, "write", func(t *testing.T, lifted bool) result {
		s := attacker(t, m, vdir, lifted)
		os.Remove(filepath.Join(vdir, "planted"))
		r := sessionRun(t, s, "sh", "-c", "echo x > "+filepath.Join(vdir, "planted"))
		if _, err := os.Stat(filepath.Join(vdir, "planted")); err == nil {
			r.Stdout += "(planted exists)"
		}
		return r
	}, func(r result) bool { return r.Code != 0 })
}

// attacker is a session of m's policy, or with lifted of a second server
// whose policy grants vdir read-write.
func attacker(t *testing.T, m *session.Manager, vdir string, lifted bool) *session.Session {
	t.Helper()
	if lifted {
		p := sessionPolicy(t, func(r *policy.Result) {
			r.Grants = []moat.PathRequest{{Path: vdir, Access: moat.READ | moat.WRITE}}
		})
		m = sessionManager(t, session.Options{Policies: []session.Policy{p}})
	}
	s, err := m.Create(context.Background(), session.CreateRequest{Name: "attacker"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
