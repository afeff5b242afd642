package escape_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyReadDoesNotSweep: reading a policy is not a run. In a cwd
// where a moat killed mid-run left .moat-write (holding **) and .git,
// `moat policy validate` and `moat policy explain` leave them, and the
// dead run's journal, where they are: only a run sweeps the host. Explain
// does not read them as the policy either: it says they were left.
// Control: the plan of a run in that cwd (policy's Document.Exec, what
// moat exec does) sweeps them before it reads the cwd's fragments, so the
// planted ** does not widen the run and nothing is left in the cwd.
func TestPolicyReadDoesNotSweep(t *testing.T) {
	isolateState(t)
	d := docCwd(t)
	killCrashRole(t, d, "")
	planted := []string{filepath.Join(d, ".moat-write"), filepath.Join(d, ".git")}
	journals := func() []string {
		m, _ := filepath.Glob(filepath.Join(stateRoot(t), "journal", "*.json"))
		return m
	}
	for _, p := range planted {
		if !exists(p) {
			t.Fatalf("control: after the SIGKILL %s is not left, so the test proves nothing: %s", p, snapshot(d))
		}
	}
	if len(journals()) == 0 {
		t.Fatalf("control: the killed run left no journal in %s", stateRoot(t))
	}
	doc := filepath.Join(t.TempDir(), "policy.json")
	writeFile(t, doc, `{"command": ["true"]}`)
	for _, verb := range []string{"validate", "explain"} {
		r := moatCLI(t, d, nil, "policy", verb, doc)
		if verb == "validate" && r.Code != 0 {
			t.Fatalf("control: moat policy validate of a valid document: %v", r)
		}
		for _, p := range planted {
			if !exists(p) {
				t.Errorf("moat policy %s swept %s: reading a policy must not touch the host (%v)", verb, p, r)
			}
		}
		if len(journals()) == 0 {
			t.Errorf("moat policy %s swept the killed run's journal", verb)
		}
		// Explain shows the policy that runs, not what the killed
		// run's sandbox wrote: its ** is not read, and explain says so.
		if verb == "explain" && (strings.Contains(r.Stdout, "grant "+d+": read and write") || !strings.Contains(r.Stdout, "left by a run killed before Close")) {
			t.Errorf("moat policy explain took the killed run's .moat-write as the policy, or did not say it was left: %v", r)
		}
	}
	// Control: a .moat-write the user wrote (no killed run made it) is
	// read, and explain shows the cwd writable.
	own := docCwd(t)
	writeFile(t, filepath.Join(own, ".moat-write"), "**\n")
	if r := moatCLI(t, own, nil, "policy", "explain", doc); !strings.Contains(r.Stdout, "grant "+own+": read and write") {
		t.Errorf("control: explain did not read the user's own .moat-write, so the check above proves nothing: %v", r)
	}
	r := runDocument(t, map[string]any{"command": []string{"sh", "-c", "echo x > w && echo WROTE"}}, d)
	if strings.Contains(r.Stdout, "WROTE") || exists(filepath.Join(d, "w")) {
		t.Errorf("control: the killed run's .moat-write widened the next run's empty policy:\n%v", r)
	}
	if left := leftControlEntries(t, d); len(left) > 0 {
		t.Errorf("control: the next run left the killed run's %v in the cwd", left)
	}
}
