//go:build linux

package escape_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// queueSignals queues real-time signals to itself, blocked, until the
// kernel refuses (at most 20,000) and prints how many it queued.
const queueSignals = `
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
sig = signal.SIGRTMIN
signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
n = 0
while n < 20000 and libc.sigqueue(os.getpid(), sig, ctypes.c_void_p(0)) == 0:
    n += 1
print("queued", n)
`

// TestUserBudgetQueuedSignals: queued signals are one budget per user
// (RLIMIT_SIGPENDING), shared by the host user's own processes. A sandbox
// that queued as many as it could took all of it, so the user's sigqueue
// and timer_create failed on the host. The sandbox's processes now get a
// share of their own (counted in its user namespace): 4,096. Control: the
// same program on the host queues all 20,000.
func TestUserBudgetQueuedSignals(t *testing.T) {
	sb := newSandbox(t, moat.Config{})
	count := func(r result) int {
		for _, l := range strings.Split(r.Stdout, "\n") {
			if n, ok := strings.CutPrefix(l, "queued "); ok {
				v, err := strconv.Atoi(n)
				if err == nil {
					return v
				}
			}
		}
		t.Fatalf("no count: %v", r)
		return 0
	}
	if n := count(python(t, sb, queueSignals)); n > 4096 {
		t.Errorf("the sandbox queued %d signals, more than its share of 4096", n)
	}
	if n := count(hostPython(t, queueSignals)); n < 20000 {
		t.Fatalf("control: the host queued only %d signals, so the probe proves nothing", n)
	}
}
