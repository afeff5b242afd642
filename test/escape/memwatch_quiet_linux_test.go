//go:build linux

package escape_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
)

// suddenMemoryProbe sleeps idle for %d seconds (the memory
// watch then only ticks: no thread of the sandbox runs), then maps 1 GiB
// of shared memory, which no per-process limit counts, and writes it as
// fast as it can.
const suddenMemoryProbe = `
import ctypes, mmap, time
time.sleep(%d)
SIZE = 1 << 30
m = mmap.mmap(-1, SIZE)
ctypes.memset(ctypes.addressof(ctypes.c_char.from_buffer(m)), 1, SIZE)
print("ALLOCATED", flush=True)
`

// killedAt is the memory the watch counted when it killed, in MiB, from
// the exit's reason ("used more than 256 MiB (resident 300 MiB, SysV
// shared memory 2 MiB)"): the sum of the parts; -1 when there is none.
func killedAt(r result) int64 {
	m := regexp.MustCompile(`used more than \S+ \S+ \(([^)]*)\)`).FindStringSubmatch(r.String())
	if m == nil {
		return -1
	}
	var total int64
	for _, part := range regexp.MustCompile(`(\d+) (GiB|MiB|KiB|bytes)`).FindAllStringSubmatch(m[1], -1) {
		n, _ := strconv.ParseInt(part[1], 10, 64)
		switch part[2] {
		case "GiB":
			total += n << 10
		case "MiB":
			total += n
		}
	}
	return total
}

// The memory watch that sleeps while the sandbox waits still stops an
// allocation at the limit, as fast as it did when it sampled every 50 ms:
// a process that allocates 1 GiB of shared memory at once, and one that
// does so after 3 s of doing nothing (while the watch skipped its full
// samples), is killed under 256 MiB, and the memory counted at the kill
// passes the limit by less than the limit itself (the
// reason rounds down to whole MiB). Control: under 2 GiB
// both allocate.
func TestMemoryWatchQuietThenSudden(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	const limit = 256 << 20
	for _, idle := range []int{0, 3} {
		t.Run(fmt.Sprintf("idle %ds", idle), func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: limit}})
			r := python(t, sb, fmt.Sprintf(suddenMemoryProbe, idle))
			if strings.Contains(r.Stdout, "ALLOCATED") || r.Err == nil {
				t.Fatalf("1 GiB allocated after %d s idle under a 256 MiB limit: %s", idle, r)
			}
			if !strings.Contains(r.String(), "memory") {
				t.Fatalf("the probe ended, but not for its memory: %s", r)
			}
			at := killedAt(r)
			t.Logf("killed at %d MiB counted (limit 256 MiB): %s", at, r)
			if at < limit>>20 || at > 2*limit>>20 {
				t.Fatalf("killed at %d MiB counted, want 256 to 512: %s", at, r)
			}
			roomy := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 2 << 30}})
			mustContain(t, python(t, roomy, fmt.Sprintf(suddenMemoryProbe, idle)), "ALLOCATED")
		})
	}
}
