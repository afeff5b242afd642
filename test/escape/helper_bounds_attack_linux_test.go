//go:build linux

package escape_test

// The helper obeys the sandbox's limits (issue 22, findings 2, 3, 15, 16):
// the zygote that supervises a sandbox's socket calls holds a bounded
// number of them, bytes and descriptors for them, under its own
// descriptor table; past the bound the sandbox's call fails with EAGAIN.
// The memory watch that holds --memory without cgroups measures a process
// whose leader thread exited through a live thread, counts shared
// anonymous memory and memfd files, and kills a sandbox it cannot measure.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/internal/moattest"
)

// pendingSendProbe fills one end of a Unix socket pair (argv: stream or
// dgram), or a datagram socket bound to a path (dgram-sendto), then
// starts THREADS threads that each send SIZE bytes on it, blocking,
// passing NFDS descriptors with SCM_RIGHTS (sendmsg; sendto to the path
// for dgram-sendto). It prints how the
// calls ended so far ("pending N eagain N ok N other ..."), then either
// drains the peer and prints how they all ended ("drained ..."), or
// maps and touches ALLOC MiB of shared anonymous memory and prints
// ALLOCATED.
const pendingSendProbe = `
import array, errno, os, socket, sys, threading, time
mode, threads, size, nfds, then = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
threading.stack_size(256 << 10)  # many threads under a small RLIMIT_DATA
typ = socket.SOCK_STREAM if mode == "stream" else socket.SOCK_DGRAM
dest = None
if mode == "dgram-sendto":
    # sendto a path: the guard checks the address and sends from a
    # thread of its own (atFD).
    dest = "/tmp/moat-pending-%d" % os.getpid()
    b = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    b.bind(dest)
    a = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
else:
    a, b = socket.socketpair(socket.AF_UNIX, typ)
if typ == socket.SOCK_DGRAM:
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 2 << 20)
a.setblocking(False)
try:
    while True:
        fill = b"f" * (65536 if typ == socket.SOCK_STREAM else 1)
        a.sendto(fill, dest) if dest else a.send(fill)
except BlockingIOError:
    pass
a.setblocking(True)
fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(nfds)]
anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
res, lock = {}, threading.Lock()
def send():
    try:
        if dest:
            a.sendto(b"x" * size, dest)
        else:
            a.sendmsg([b"x" * size], anc)
        r = "ok"
    except OSError as e:
        r = "eagain" if e.errno == errno.EAGAIN else "other-" + errno.errorcode.get(e.errno, str(e.errno))
    with lock:
        res[r] = res.get(r, 0) + 1
ts = [threading.Thread(target=send, daemon=True) for _ in range(threads)]
for t in ts:
    t.start()
time.sleep(2)
def show(label):
    with lock:
        done = sum(res.values())
        print(label, "pending", threads - done, " ".join("%s %d" % kv for kv in sorted(res.items())), flush=True)
show("before")
if then == "drain":
    b.setblocking(False)
    deadline = time.time() + 20
    while any(t.is_alive() for t in ts) and time.time() < deadline:
        try:
            while True:
                m = b.recvmsg(1 << 21, socket.CMSG_SPACE(4 * 253))
                for lvl, typ_, data in m[1]:
                    for fd in array.array("i", data[: len(data) - len(data) % 4]):
                        os.close(fd)
        except BlockingIOError:
            time.sleep(0.01)
    show("drained")
else:
    # Shared anonymous memory: RLIMIT_DATA does not count it, only the
    # memory watch does.
    import ctypes, mmap
    n = int(then) << 20
    m = mmap.mmap(-1, n)
    ctypes.memset(ctypes.addressof(ctypes.c_char.from_buffer(m)), 1, n)
    print("ALLOCATED", flush=True)
`

// pendingCounts parses the probe's line with label.
func pendingCounts(t *testing.T, r result, label string) map[string]int {
	t.Helper()
	for _, line := range strings.Split(r.Stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != label {
			continue
		}
		out := map[string]int{}
		for i := 1; i+1 < len(f); i += 2 {
			n, err := strconv.Atoi(f[i+1])
			if err != nil {
				t.Fatalf("probe line %q: %v", line, err)
			}
			out[f[i]] = n
		}
		return out
	}
	t.Fatalf("no %q line from the probe: %s", label, r)
	return nil
}

// guardedSandbox is a sandbox whose socket calls the zygote supervises.
func guardedSandbox(t *testing.T, lim moat.Limits) *moat.Sandbox {
	t.Helper()
	sb := newSandbox(t, moat.Config{Limits: lim})
	if !sb.Report().Active("unix-sockets") {
		t.Fatalf("the socket guard is not active here, so its bounds cannot be attacked: %+v", sb.Report().Layers)
	}
	return sb
}

// TestHelperSockguardPendingBounds: a sandbox holds supervised sends
// blocked, each making the zygote keep a copy of the data (stream and
// datagram), a call, or the descriptors passed. Past the bound (16 MiB,
// 256 descriptors) its own call fails with EAGAIN (past 64 calls it waits
// in a queue of 4,096 first), and no other
// error shows that the zygote ran short. Control: within the bound every
// call blocks, and succeeds once the peer reads.
func TestHelperSockguardPendingBounds(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	cases := []struct {
		name            string
		mode            string
		threads, size   int
		nfds            int
		maxPending      int // the bound: at most this many stay pending
		controlThreads  int // within the bound
		boundDescribing string
	}{
		{"stream bytes", "stream", 24, 1 << 20, 0, 16, 12, "16 MiB of stream data (1 MiB copied per call)"},
		{"datagram bytes", "dgram", 24, 1 << 20, 0, 16, 12, "16 MiB of datagrams"},
		{"datagram sendto a path, bytes", "dgram-sendto", 24, 1 << 20, 0, 16, 12, "16 MiB of datagrams sent to a path"},
		// Limits F5: past 64 calls a blocking call waits, unanswered, in
		// the guard's queue, as a blocking call to a busy peer does; none
		// fails with EAGAIN, which Linux never returns for a blocking
		// socket, and all succeed once the peer reads.
		{"calls past 64 wait, blocking", "stream", 96, 1, 0, 96, 48, "64 pending calls and the queue behind them"},
		{"descriptors", "stream", 60, 1, 8, 32, 24, "256 descriptors passed (8 per call)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A sandbox of its own: the bounds are per sandbox.
			sb := guardedSandbox(t, moat.Limits{MemoryBytes: 1 << 30})
			args := func(threads int) []string {
				return []string{tc.mode, strconv.Itoa(threads), strconv.Itoa(tc.size), strconv.Itoa(tc.nfds), "drain"}
			}
			r := inSandbox(t, sb, append([]string{"python3", "-c", pendingSendProbe}, args(tc.threads)...)...)
			got := pendingCounts(t, r, "before")
			if got["pending"] > tc.maxPending {
				t.Fatalf("%d sends pending past the bound of %s: %v\n%s", got["pending"], tc.boundDescribing, got, r)
			}
			if tc.maxPending == tc.threads && got["eagain"] != 0 {
				t.Fatalf("%d blocking sends failed with EAGAIN within %s: %v\n%s", got["eagain"], tc.boundDescribing, got, r)
			}
			if want := tc.threads - tc.maxPending; got["eagain"] < want {
				t.Fatalf("want at least %d sends refused with EAGAIN past %s, got %v\n%s", want, tc.boundDescribing, got, r)
			}
			for k := range got {
				if strings.HasPrefix(k, "other-") {
					t.Fatalf("a send failed with %s, not EAGAIN: the zygote ran short: %v\n%s", k, got, r)
				}
			}
			after := pendingCounts(t, r, "drained")
			if after["pending"] != 0 || after["ok"] != tc.threads-got["eagain"] {
				t.Fatalf("the sends within the bound did not all succeed once the peer read: %v\n%s", after, r)
			}
			// Control: within the bound, none is refused and all succeed.
			c := inSandbox(t, sb, append([]string{"python3", "-c", pendingSendProbe}, args(tc.controlThreads)...)...)
			cb := pendingCounts(t, c, "before")
			if cb["eagain"] != 0 || cb["pending"] != tc.controlThreads {
				t.Fatalf("control: %d sends within the bound of %s did not all stay pending: %v\n%s", tc.controlThreads, tc.boundDescribing, cb, c)
			}
			if ca := pendingCounts(t, c, "drained"); ca["ok"] != tc.controlThreads {
				t.Fatalf("control: %d sends within the bound did not all succeed: %v\n%s", tc.controlThreads, ca, c)
			}
		})
	}
}

// TestHelperPendingFDsUnderLowNofile is finding 2: under a low
// RLIMIT_NOFILE the sandbox holds sends blocked that each pass
// descriptors, hoping to fill the zygote's descriptor table so that its
// memory watch cannot read /proc and counts 0. The zygote's table is not
// the sandbox's: the sends past the bound fail with EAGAIN, and a process
// that then allocates past --memory is killed, measured (not for want of
// a measurement). Control: the same under a roomy memory limit allocates.
func TestHelperPendingFDsUnderLowNofile(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	run := func(mem int64) result {
		sb := guardedSandbox(t, moat.Limits{MemoryBytes: mem, OpenFiles: 64})
		return inSandbox(t, sb, "python3", "-c", pendingSendProbe, "stream", "60", "1", "8", "300")
	}
	r := run(128 << 20)
	got := pendingCounts(t, r, "before")
	if got["eagain"] < 60-32 || got["pending"] > 32 {
		t.Fatalf("want the sends past 256 passed descriptors refused with EAGAIN: %v\n%s", got, r)
	}
	if strings.Contains(r.Stdout, "ALLOCATED") {
		t.Fatalf("300 MiB allocated under --memory 128M while the zygote held passed descriptors: %s", r)
	}
	ee, ok := r.Err.(*moat.ExitError)
	if !ok || !strings.Contains(ee.Reason(), "memory") {
		t.Fatalf("want a kill by the memory limit, got %v: %s", r.Err, r)
	}
	if strings.Contains(ee.Reason(), "could not measure") {
		t.Fatalf("the watch could not measure while the zygote held passed descriptors (its table must not be the sandbox's): %s", ee.Reason())
	}
	// Control: the same probe with room allocates and exits.
	c := run(1 << 30)
	mustContain(t, c, "ALLOCATED")
	if c.Err != nil {
		t.Fatalf("control: the probe failed under a roomy limit: %s", c)
	}
}

// leaderExitSource holds memory in PROCS processes whose leader thread
// exits with SYS_exit while a second thread holds it: MiB each, as a
// shared anonymous mapping or a private one. Each holder prints HELD, then
// SURVIVED after SECS seconds.
const leaderExitSource = `#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *mode;
static size_t size;
static int secs;

static void *hold(void *arg) {
	(void)arg;
	int flags = MAP_ANONYMOUS | (strcmp(mode, "shared") == 0 ? MAP_SHARED : MAP_PRIVATE);
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED) { perror("mmap"); _exit(3); }
	memset(p, 1, size);
	printf("HELD\n");
	fflush(stdout);
	sleep(secs);
	printf("SURVIVED\n");
	fflush(stdout);
	_exit(0);
}

static void leader_exits(void) {
	pthread_t t;
	if (pthread_create(&t, NULL, hold, NULL) != 0) _exit(4);
	syscall(SYS_exit, 0); /* this thread only: the process lives on */
}

int main(int argc, char **argv) {
	if (argc != 5) return 2;
	mode = argv[1];
	int procs = atoi(argv[2]);
	size = (size_t)atol(argv[3]) << 20;
	secs = atoi(argv[4]);
	for (int i = 1; i < procs; i++)
		if (fork() == 0) leader_exits();
	leader_exits();
	return 0;
}
`

// buildLeaderExitProbe compiles leaderExitSource into a directory the
// sandbox may execute from.
func buildLeaderExitProbe(t *testing.T) (dir, bin string) {
	t.Helper()
	need(t, "gcc")
	dir = t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "leaderexit.c")
	bin = filepath.Join(dir, "leaderexit")
	if err := moattest.WriteFile(src, []byte(leaderExitSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return dir, bin
}

// TestMemwatchLeaderExited is finding 15: a process whose leader thread
// has exited shows no VmRSS, and the watch counted it as 0. Each case
// holds more than --memory 128M in processes whose leaders exited: shared
// anonymous memory (which RLIMIT_DATA does not count), private memory
// spread over six processes each under the limit. Each is killed.
// Control: the same probe under 1 GiB survives.
func TestMemwatchLeaderExited(t *testing.T) {
	t.Parallel()
	dir, bin := buildLeaderExitProbe(t)
	grant := []moat.Grant{{Path: dir, Access: moat.EXEC}}
	limited := newSandbox(t, moat.Config{Grants: grant, Limits: moat.Limits{MemoryBytes: 128 << 20}})
	roomy := newSandbox(t, moat.Config{Grants: grant, Limits: moat.Limits{MemoryBytes: 1 << 30}})
	cases := []struct {
		name, mode string
		procs, mib int
	}{
		{"shared anonymous, one process", "shared", 1, 256},
		{"private, six processes each under the limit", "private", 6, 40},
		{"shared anonymous, six processes", "shared", 6, 40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{bin, tc.mode, strconv.Itoa(tc.procs), strconv.Itoa(tc.mib)}
			r := inSandbox(t, limited, append(args, "3")...)
			if strings.Contains(r.Stdout, "SURVIVED") {
				t.Fatalf("%d process(es) whose leader exited held %d MiB each under --memory 128M: %s", tc.procs, tc.mib, r)
			}
			ee, ok := r.Err.(*moat.ExitError)
			if !ok || !strings.Contains(ee.Reason(), "memory") {
				t.Fatalf("want a kill by the memory limit, got %v: %s", r.Err, r)
			}
			// Control: with room, every holder survives.
			c := inSandbox(t, roomy, append(args, "1")...)
			if n := strings.Count(c.Stdout, "SURVIVED"); n < 1 || c.Err != nil {
				t.Fatalf("control: the probe did not survive under 1 GiB: %s", c)
			}
		})
	}
}
