package escape_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moat-sandbox/moat/internal/session"
	"github.com/moat-sandbox/moat/policy"
)

// sessionPolicy is moat's library defaults with a 256 MiB memory limit,
// changed by f, as the policy "default" of a session manager.
func sessionPolicy(t *testing.T, f func(*policy.Result)) session.Policy {
	t.Helper()
	r, err := policy.Merge()
	if err != nil {
		t.Fatal(err)
	}
	r.Config.Limits.MemoryBytes = 256 << 20
	if f != nil {
		f(&r)
	}
	return session.Policy{Name: "default", Source: "test", Result: r}
}

// sessionManager makes a Manager of opt (no warm pool unless asked), shut
// down when the test ends.
func sessionManager(t *testing.T, opt session.Options) *session.Manager {
	t.Helper()
	if len(opt.Policies) == 0 {
		opt.Policies = []session.Policy{sessionPolicy(t, nil)}
	}
	if opt.WarmPool == 0 {
		opt.WarmPool = -1
	}
	m, err := session.NewManager(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Shutdown)
	return m
}

// sessionRun runs argv in s and returns what it printed.
func sessionRun(t *testing.T, s *session.Session, argv ...string) result {
	t.Helper()
	res, err := s.Run(context.Background(), session.RunRequest{Argv: argv, Timeout: 30 * time.Second}, nil)
	if err != nil {
		return result{Err: err, Code: -1}
	}
	return result{Stdout: string(res.Stdout), Stderr: string(res.Stderr), Code: res.ExitCode}
}

// sessionCode is err's session error code, or "" for none.
func sessionCode(err error) string {
	var e *session.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// hostPIDsWithArg lists this user's processes on the host that have arg
// among their arguments.
func hostPIDsWithArg(t *testing.T, arg string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), arg) {
			out = append(out, pid)
		}
	}
	return out
}
