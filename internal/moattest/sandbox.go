package moattest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/moat-sandbox/moat"
)

// NewSandbox creates a sandbox with cfg, failing the test when moat.New
// fails, and closes it when the test ends; an error from Close fails the
// test.
func NewSandbox(t testing.TB, cfg moat.Config) *moat.Sandbox {
	t.Helper()
	sb, err := moat.New(cfg)
	if err != nil {
		t.Fatalf("moat.New: %v", err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return sb
}

// ExitIfRoot is for a TestMain of a suite that must run as an unprivileged
// user, the way moat is used (root passes many probes for the wrong reasons
// and sees every home): run as root, it prints why and exits with status 2,
// unless the environment variable override is "1". suite names the suite
// in the message.
func ExitIfRoot(suite, override string) {
	if os.Geteuid() == 0 && os.Getenv(override) != "1" {
		fmt.Fprintf(os.Stderr, "%s: refusing to run as root; run ./test.sh, which runs it as an unprivileged user (or set %s=1)\n", suite, override)
		os.Exit(2)
	}
}

// Need fails the test, loudly, when one of tools is not on PATH: ./test.sh
// installs every tool the suites use, so a missing one is a harness bug,
// never a reason to skip.
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH (%s); ./test.sh run as root installs it", tool, os.Getenv("PATH"))
		}
	}
}
