//go:build linux

package escape_test

import (
	"os"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// withoutNamespaces runs body in a child test process that cannot create
// user namespaces at all (moattest.WithoutUserNamespaces: a seccomp filter
// answers clone and unshare with CLONE_NEWUSER EPERM, clone3 ENOSYS), the
// way a host that refuses them does. Before body, moat meets the refusal:
// a first sandbox, configured while moat still believed namespaces work,
// must run its first command anyway, without them, and report the gaps;
// every sandbox body creates afterwards is configured without namespaces
// from the start, and the commands of the first run in this process's own
// user namespace.
func withoutNamespaces(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	moattest.WithoutUserNamespaces(t, func(t *testing.T) {
		sb := newSandbox(t, moat.Config{})
		if out, err := sb.Command("echo", "fell-back").CombinedOutput(); err != nil || string(out) != "fell-back\n" {
			t.Fatalf("the first command did not fall back to running without namespaces: %v: %s", err, out)
		}
		if rep := sb.Report(); rep.Active("namespaces") || len(rep.Gaps) == 0 {
			t.Fatalf("after the refusal the report does not show the fallback:\n%s", rep)
		}
		if rep := newSandbox(t, moat.Config{}).Report(); rep.Active("namespaces") {
			t.Fatalf("a sandbox created after the refusal still plans namespaces:\n%s", rep)
		}
		// The sandbox's commands share this process's user namespace.
		own, err := os.Readlink("/proc/self/ns/user")
		if err != nil || !strings.HasPrefix(own, "user:[") {
			t.Fatalf("this process's user namespace: %q, %v", own, err)
		}
		if r := inSandbox(t, sb, "readlink", "/proc/self/ns/user"); strings.TrimSpace(r.Stdout) != own {
			t.Fatalf("a command runs in user namespace %q, not this process's %q: %s", strings.TrimSpace(r.Stdout), own, r)
		}
		body(t)
	})
}
