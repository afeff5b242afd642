package moattest

import (
	"errors"
	"os/exec"
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
