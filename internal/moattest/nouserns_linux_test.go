package moattest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// Under WithoutUserNamespaces, starting a process in a new user namespace
// fails with EPERM, the way moat's helper meets it on such a host; the
// control starts the same process without the filter.
func TestWithoutUserNamespaces(t *testing.T) {
	start := func() error {
		c := exec.Command("true")
		c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		return c.Run()
	}
	if err := start(); err != nil {
		t.Fatalf("control: a process in a new user namespace does not start without the filter: %v", err)
	}
	WithoutUserNamespaces(t, func(t *testing.T) {
		if err := start(); !errors.Is(err, syscall.EPERM) {
			t.Fatalf("a process in a new user namespace: err = %v, want EPERM", err)
		}
		// Ordinary processes still start.
		if err := exec.Command("true").Run(); err != nil {
			t.Fatalf("true: %v", err)
		}
	})
}

// The pattern selects exactly one test or subtest.
func TestRunPattern(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"TestA", "^TestA$"},
		{"TestA/sub_case", "^TestA$/^sub_case$"},
		{"TestA/x.y", `^TestA$/^x\.y$`},
	} {
		if got := runPattern(tc.name); got != tc.want {
			t.Errorf("runPattern(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The parent reports what happened in the child: a failing body fails the
// test, a skipping one skips it, a passing one passes. Each case runs this
// test binary again, as the parent, with the body chosen by an environment
// variable.
func TestWithoutUserNamespacesReportsChild(t *testing.T) {
	const env = "MOAT_TEST_NOUSERNS_BODY"
	if body := os.Getenv(env); body != "" {
		WithoutUserNamespaces(t, func(t *testing.T) {
			switch body {
			case "fail":
				t.Fatal("the body failed on purpose")
			case "skip":
				t.Skip("the body skipped on purpose")
			}
		})
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body, want string
		ok         bool
	}{
		{"fail", "the test failed without user namespaces", false},
		{"skip", "--- SKIP: TestWithoutUserNamespacesReportsChild", true},
		{"pass", "--- PASS: TestWithoutUserNamespacesReportsChild", true},
	} {
		t.Run(tc.body, func(t *testing.T) {
			c := exec.Command(exe, "-test.run", "^TestWithoutUserNamespacesReportsChild$", "-test.v", "-test.count=1")
			c.Env = append(os.Environ(), env+"="+tc.body)
			out, err := c.CombinedOutput()
			if (err == nil) != tc.ok || !strings.Contains(string(out), tc.want) {
				t.Fatalf("body %s: err = %v, want ok=%v and %q in:\n%s", tc.body, err, tc.ok, tc.want, out)
			}
		})
	}
}
