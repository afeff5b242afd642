package escape_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyReadDoesNotSweep: reading a policy is not a run. In a cwd
// where a moat killed mid-run left .moat-write (holding **) and .git,
// `moat policy validate` and `moat policy explain` leave them, and the
// dead run's journal, where they are: only a run sweeps the host.
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
	}
	r := runDocument(t, map[string]any{"command": []string{"sh", "-c", "echo x > w && echo WROTE"}}, d)
	if strings.Contains(r.Stdout, "WROTE") || exists(filepath.Join(d, "w")) {
		t.Errorf("control: the killed run's .moat-write widened the next run's empty policy:\n%v", r)
	}
	if left := leftControlEntries(t, d); len(left) > 0 {
		t.Errorf("control: the next run left the killed run's %v in the cwd", left)
	}
}
