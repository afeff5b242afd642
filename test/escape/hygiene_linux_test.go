//go:build linux

package escape_test

// Hygiene probes: the state the command starts in (privileges, core dumps,
// session, priorities).

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/moat-sandbox/moat"
)

// The command has no_new_privs, a seccomp filter, and no capabilities in
// any set, bounding set included.
func TestHygieneProcStatus(t *testing.T) {
	t.Parallel()
	probe := "grep -E '^(NoNewPrivs|Seccomp|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status"
	r := sh(t, newSandbox(t, moat.Config{}), probe)
	if r.Err != nil {
		t.Fatalf("probe failed: %s", r)
	}
	got := fields(r.Stdout)
	want := map[string]string{
		"NoNewPrivs": "1", "Seccomp": "2",
		"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
		"CapBnd": "0000000000000000", "CapAmb": "0000000000000000",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// Control: the same probe on the host shows what moat takes away.
	h := fields(hostSh(t, probe).Stdout)
	if h["NoNewPrivs"] != "0" || h["Seccomp"] != "0" || h["CapBnd"] == "0000000000000000" || h["CapBnd"] == "" {
		t.Fatalf("control: the host's status already looks sandboxed: %v", h)
	}
	if unix.Geteuid() == 0 && h["CapEff"] == "0000000000000000" {
		t.Fatalf("control: root on the host has no effective capabilities: %v", h)
	}
}

// RLIMIT_CORE is 0, soft and hard, so a crash cannot dump memory and the
// command cannot raise it again.
func TestHygieneNoCoreDumps(t *testing.T) {
	t.Parallel()
	probe := `ulimit -c; ulimit -H -c; ulimit -c unlimited 2>/dev/null && echo RAISED; true`
	r := sh(t, newSandbox(t, moat.Config{}), probe)
	if lines := strings.Fields(r.Stdout); len(lines) < 2 || lines[0] != "0" || lines[1] != "0" {
		t.Fatalf("want core limits 0 0: %s", r)
	}
	mustNotContain(t, r, "RAISED")
	// Control: on the host the hard limit allows raising it.
	h := hostSh(t, probe)
	if !strings.Contains(h.Stdout, "RAISED") {
		t.Fatalf("control: the host cannot raise RLIMIT_CORE either, the probe proves nothing: %s", h)
	}
}

const sessionProbe = `import os; print(os.getsid(0), os.getpid(), os.getpgid(0))`

// The command runs in a session of its own, away from the caller's
// terminal and job control.
func TestHygieneNewSession(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	testSid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(r result) (sid, pid int) {
		f := strings.Fields(r.Stdout)
		if len(f) != 3 {
			t.Fatalf("unexpected probe output: %s", r)
		}
		sid, _ = strconv.Atoi(f[0])
		pid, _ = strconv.Atoi(f[1])
		return sid, pid
	}
	sid, pid := parse(python(t, newSandbox(t, moat.Config{}), sessionProbe))
	if sid != pid {
		t.Errorf("the command is not a session leader: sid %d pid %d", sid, pid)
	}
	if sid == testSid {
		t.Errorf("the command shares the caller's session %d", testSid)
	}
	// Control: a plain child of the test stays in the test's session.
	hsid, hpid := parse(hostPython(t, sessionProbe))
	if hsid != testSid || hsid == hpid {
		t.Fatalf("control: host child sid %d pid %d, test sid %d", hsid, hpid, testSid)
	}
}

// Nice lowers the CPU priority by that many steps, capped at 19.
func TestHygieneNice(t *testing.T) {
	t.Parallel()
	hostNice, err := strconv.Atoi(strings.TrimSpace(hostSh(t, "nice").Stdout))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ nice, want int }{
		{0, hostNice}, // control: unchanged
		{5, min(hostNice+5, 19)},
		{19, 19},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("nice=%d", tc.nice), func(t *testing.T) {
			t.Parallel()
			r := inSandbox(t, newSandbox(t, moat.Config{Nice: tc.nice}), "nice")
			if got := strings.TrimSpace(r.Stdout); got != strconv.Itoa(tc.want) {
				t.Fatalf("nice prints %q, want %d (host %d): %s", got, tc.want, hostNice, r)
			}
		})
	}
	t.Run("cannot raise it back", func(t *testing.T) {
		t.Parallel()
		// The second renice, lowering the priority further, is the control
		// that renice works at all in the sandbox.
		r := sh(t, newSandbox(t, moat.Config{Nice: 10}), "renice -n 0 -p $$ >/dev/null 2>&1; nice; renice -n 19 -p $$ >/dev/null; nice")
		want := strconv.Itoa(min(hostNice+10, 19)) + " 19"
		if got := strings.Join(strings.Fields(r.Stdout), " "); got != want {
			t.Fatalf("nice after renicing back and then down: %q, want %q: %s", got, want, r)
		}
	})
}

// IOPriority sets the I/O class the command runs in.
func TestHygieneIOPriority(t *testing.T) {
	t.Parallel()
	need(t, "ionice")
	host := strings.TrimSpace(hostSh(t, "ionice -p $$").Stdout)
	tests := []struct {
		prio moat.IOPriority
		want string
	}{
		{moat.IOPriorityDefault, host}, // control: unchanged, and differs from the others
		{moat.IOPriorityUtility, "best-effort: prio 7"},
		{moat.IOPriorityBackground, "idle"},
	}
	for _, tc := range tests {
		t.Run(tc.prio.String(), func(t *testing.T) {
			t.Parallel()
			r := sh(t, newSandbox(t, moat.Config{IOPriority: tc.prio}), "ionice -p $$")
			if got := strings.TrimSpace(r.Stdout); got != tc.want {
				t.Fatalf("ionice prints %q, want %q: %s", got, tc.want, r)
			}
		})
	}
	if host == "idle" || host == "best-effort: prio 7" {
		t.Fatalf("control: the host already runs at %q, the probe cannot tell", host)
	}
}

// Priorities outside the documented ranges are errors from New.
func TestHygieneInvalidPriority(t *testing.T) {
	t.Parallel()
	for _, cfg := range []moat.Config{{Nice: 25}, {Nice: -1}, {Nice: 20}, {IOPriority: 7}, {IOPriority: -1}} {
		sb, err := moat.New(cfg)
		if err == nil {
			sb.Close()
			t.Errorf("moat.New accepted Nice %d IOPriority %d", cfg.Nice, cfg.IOPriority)
		}
	}
}
