//go:build linux

package escape_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// wideMemoryProbe forks four processes that each touch 60 MiB, under any
// per-process limit of 128 MiB, and each names itself like a field of
// /proc/PID/status, hoping the memory watch takes the name for its size.
const wideMemoryProbe = `
import ctypes, os, time
libc = ctypes.CDLL(None)
kids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        libc.prctl(15, b"VmRSS: 0", 0, 0, 0)  # PR_SET_NAME
        b = bytearray(60 << 20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        time.sleep(%d)
        os._exit(0)
    kids.append(pid)
time.sleep(%d)
print("SURVIVED", flush=True)
for k in kids:
    os.waitpid(k, 0)
`

// Limits.MemoryBytes bounds the whole sandbox, not each process: four
// processes of 60 MiB under 128 MiB are killed, even when each names
// itself "VmRSS: 0" to look empty to the watch that holds the limit
// without cgroups. Control: under 1 GiB the same probe survives.
func TestLimitsMemoryWholeTreeNotFooledByNames(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	limited := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 128 << 20}})
	r := python(t, limited, fmt.Sprintf(wideMemoryProbe, 3, 2))
	if strings.Contains(r.Stdout, "SURVIVED") {
		t.Fatalf("four processes held 240 MiB under a 128 MiB limit: %s", r)
	}
	if r.Err == nil {
		t.Fatalf("the probe was neither killed nor failed: %s", r)
	}
	roomy := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 1 << 30}})
	mustContain(t, python(t, roomy, fmt.Sprintf(wideMemoryProbe, 1, 2)), "SURVIVED")
}
