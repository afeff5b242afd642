//go:build linux

package escape_test

// Limits on what the kernel holds outside any process's RSS (SysV IPC,
// socket buffers, /dev/shm), on inodes, on burst writes, and the report of
// every limit kill. Each probe has a control where the limit is lifted.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
)

// sysvProbe makes up to n SysV segments of size bytes, touches every page,
// detaches them and leaves them behind; it prints how many it made and the
// errno that stopped it.
const sysvProbe = `
DETACH = %s
import ctypes, ctypes.util, os
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.shmat.restype = ctypes.c_void_p
n, err = 0, None
for i in range(%d):
    sid = libc.shmget(0, %d, 0o1000 | 0o600)
    if sid < 0:
        err = ctypes.get_errno(); break
    addr = libc.shmat(sid, None, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        err = ctypes.get_errno(); break
    ctypes.memset(addr, 1, %d)
    if DETACH:
        libc.shmdt(ctypes.c_void_p(addr))
    n += 1
rows = open("/proc/sysvipc/shm").read().split("\n")
rss = rows[0].split().index("rss")
pinned = sum(int(r.split()[rss]) for r in rows[1:] if r.strip())
print("SEGMENTS", n, "errno", err, "PINNED", pinned, flush=True)
`

// sysvResident sums the resident bytes of the SysV segments this IPC
// namespace still holds.
const sysvResident = `
rows = open("/proc/sysvipc/shm").read().split("\n")
cols = rows[0].split()
total = sum(int(r.split()[cols.index("rss")]) for r in rows[1:] if r.strip())
print("RESIDENT", total, "COUNT", len([r for r in rows[1:] if r.strip()]))
`

func probeField(t *testing.T, r result, key string) int64 {
	t.Helper()
	f := strings.Fields(r.Stdout)
	for i := range f[:max(len(f)-1, 0)] {
		if f[i] == key {
			n, err := strconv.ParseInt(f[i+1], 10, 64)
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("no %s in the probe's output: %s", key, r)
	return 0
}

// 64 detached SysV segments of 16 MiB under a 200 MiB limit cannot pin
// 1 GiB: the IPC namespace's shmall stops them at the limit (or the memory
// watch kills the command), nothing survives the command beyond the limit,
// and the sandbox cannot raise the namespace's limits. Control: on the
// host the same probe's segments outlive it.
func TestLimitsSysVSharedMemory(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	const seg = 16 << 20
	sb := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 200 << 20, Timeout: 60 * time.Second}})
	for _, detach := range []string{"True", "False"} {
		r := python(t, sb, fmt.Sprintf(sysvProbe, detach, 64, seg, seg))
		if !strings.Contains(r.Stdout, "SEGMENTS") {
			// Killed instead: the memory watch must say so.
			if ee := exitError(t, r.Err); !strings.Contains(ee.Reason(), "limit: memory") {
				t.Fatalf("detach=%s: the probe died without a memory reason: %q: %s", detach, ee.Reason(), r)
			}
			continue
		}
		if p := probeField(t, r, "PINNED"); p > 200<<20 {
			t.Fatalf("detach=%s: SysV segments pinned %d bytes under a 200 MiB limit: %s", detach, p, r)
		}
		if detach == "False" && probeField(t, r, "SEGMENTS") >= 13 {
			t.Fatalf("the sandbox kept %d attached segments of 16 MiB under a 200 MiB limit: %s", probeField(t, r, "SEGMENTS"), r)
		}
	}
	left := python(t, sb, sysvResident)
	if res := probeField(t, left, "RESIDENT"); res > 200<<20 {
		t.Fatalf("after the command, SysV segments still hold %d bytes under a 200 MiB limit: %s", res, left)
	}
	// The limits are the sandbox user's in its IPC namespace, but not
	// writable from inside.
	w := sh(t, sb, `cat /proc/sys/kernel/shmmax; echo 1099511627776 > /proc/sys/kernel/shmmax && echo RAISED; cat /proc/sys/kernel/shmmax`)
	mustNotContain(t, w, "RAISED")
	if got := strings.Fields(w.Stdout); len(got) != 2 || got[0] != strconv.Itoa(200<<20) || got[1] != got[0] {
		t.Fatalf("kernel.shmmax in the sandbox = %v, want %d, unchanged: %s", got, 200<<20, w)
	}

	// Control: on the host, 8 segments of 16 MiB outlive their creator.
	before := probeField(t, hostPython(t, sysvResident), "COUNT")
	h := hostPython(t, fmt.Sprintf(sysvProbe, "True", 8, seg, seg))
	t.Cleanup(func() {
		hostSh(t, `ipcs -m | awk -v u="$(id -un)" '$3==u && $6==0 {print $2}' | xargs -r -n1 ipcrm -m`)
	})
	if probeField(t, h, "SEGMENTS") != 8 {
		t.Fatalf("control: the host refused the segments: %s", h)
	}
	if after := probeField(t, hostPython(t, sysvResident), "COUNT"); after < before+8 {
		t.Fatalf("control: the host's segments did not outlive the probe (%d before, %d after)", before, after)
	}
	// Control: a roomy sandbox lets the probe keep 16 attached segments,
	// more than it could above, so the limit, not the probe, stopped it.
	roomy := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 2 << 30}})
	if n := probeField(t, python(t, roomy, fmt.Sprintf(sysvProbe, "False", 16, seg, seg)), "SEGMENTS"); n != 16 {
		t.Fatalf("control: a 2 GiB sandbox made only %d segments of 16 MiB", n)
	}
}

// socketBufferProbe makes n socket pairs, grows each send buffer to the
// kernel's maximum and fills it without reading; it prints the bytes
// queued, then holds them for hold seconds.
const socketBufferProbe = `
import socket, time
pairs, queued = [], 0
for i in range(%d):
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
    a.setblocking(False)
    chunk = b"x" * 65536
    try:
        while True:
            queued += a.send(chunk)
    except BlockingIOError:
        pass
    pairs.append((a, b))
print("QUEUED", queued, flush=True)
time.sleep(%g)
print("HELD", flush=True)
`

// tcpBufferProbe opens n loopback TCP connections in the sandbox's own
// network namespace and fills them without reading; it prints the bytes
// queued, then holds them for hold seconds.
const tcpBufferProbe = `
import socket, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(128)
conns, queued = [], 0
for i in range(%d):
    c = socket.create_connection(srv.getsockname())
    a, _ = srv.accept()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
    c.setblocking(False)
    deadline = time.time() + 2
    try:
        while time.time() < deadline:
            queued += c.send(b"x" * 65536)
    except BlockingIOError:
        pass
    conns.append((c, a))
print("QUEUED", queued, flush=True)
time.sleep(%g)
print("HELD", flush=True)
`

// Loopback TCP connections with full buffers count like Unix sockets.
func TestLimitsTCPBuffers(t *testing.T) {
	t.Parallel()
	testBufferLimit(t, tcpBufferProbe, 40, "TCP connections")
}

// 66 Unix socket pairs with full buffers under a 64 MiB limit cannot pin
// 1 GiB while RSS stays small: the init counts socket buffers and kills
// the sandbox, naming the limit. Control: with 2 GiB the same probe queues
// far more than 64 MiB and holds it.
func TestLimitsSocketBuffers(t *testing.T) {
	t.Parallel()
	testBufferLimit(t, socketBufferProbe, 66, "socket pairs")
}

// testBufferLimit runs probe (formatted with a count and a hold time) with
// n sockets under a 64 MiB limit, which must kill it naming the memory
// limit and the socket buffers, and with 16 under 2 GiB, which must queue
// more than 64 MiB and hold it.
func testBufferLimit(t *testing.T, probe string, n int, what string) {
	need(t, "python3")
	sb := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 64 << 20, Timeout: 60 * time.Second}})
	r := python(t, sb, fmt.Sprintf(probe, n, 3.0))
	if strings.Contains(r.Stdout, "HELD") {
		t.Fatalf("%d full %s were held under a 64 MiB limit: %s", n, what, r)
	}
	ee := exitError(t, r.Err)
	if !strings.Contains(ee.Reason(), "limit: memory") || !strings.Contains(ee.Reason(), "socket buffers") {
		t.Fatalf("Reason() = %q, want the memory limit and the socket buffers named: %s", ee.Reason(), r)
	}
	if !hasRefusal(sb, "limit", "memory") {
		t.Fatalf("no limit refusal for memory in %v", sb.Refusals())
	}
	// Control: room for the buffers.
	roomy := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 2 << 30}})
	c := python(t, roomy, fmt.Sprintf(probe, 16, 0.5))
	mustContain(t, c, "HELD")
	if q := probeField(t, c, "QUEUED"); q < 64<<20 {
		t.Fatalf("control: 16 %s queued only %d bytes; the probe cannot show the attack", what, q)
	}
}

// /dev/shm and resident memory count together: 48 MiB in /dev/shm plus
// 48 MiB of heap pass a 64 MiB limit although each alone fits.
func TestLimitsPosixShmCounted(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	probe := `
import time
open("/dev/shm/fill", "wb").write(b"\1" * (48 << 20))
b = bytearray(48 << 20); b[::4096] = b"\1" * len(b[::4096])
time.sleep(2)
print("HELD", flush=True)
`
	sb := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 64 << 20, Timeout: 60 * time.Second}})
	r := python(t, sb, probe)
	mustNotContain(t, r, "HELD")
	if ee := exitError(t, r.Err); !strings.Contains(ee.Reason(), "/dev/shm") {
		t.Fatalf("Reason() = %q, want /dev/shm named: %s", ee.Reason(), r)
	}
	// Control: with 256 MiB the same probe holds both.
	mustContain(t, python(t, newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 256 << 20}}), probe), "HELD")
}

// inodeProbe creates n empty files in the working directory.
const inodeProbe = `
import os
os.makedirs("many", exist_ok=True)
for i in range(%d):
    open("many/f%%d" %% i, "w").close()
print("CREATED", %d, flush=True)
`

// 200,000 empty files under a 20 MiB disk limit are stopped quickly: the
// default inode limit is one per 4 KiB of the byte limit. Not parallel:
// the limit is measured on the file system's free inodes.
func TestLimitsDiskInodes(t *testing.T) {
	need(t, "python3")
	sb := newSandbox(t, moat.Config{Limits: moat.Limits{DiskBytes: 20 << 20, Timeout: 60 * time.Second}})
	start := time.Now()
	r := python(t, sb, fmt.Sprintf(inodeProbe, 200000, 200000))
	took := time.Since(start)
	n, _ := filepath.Glob(filepath.Join(sb.WorkDir(), "many", "*"))
	os.RemoveAll(filepath.Join(sb.WorkDir(), "many"))
	mustNotContain(t, r, "CREATED")
	ee := exitError(t, r.Err)
	// Both limits are measured on the whole file system, so the host's
	// own writes there can trip the byte limit first; the explicit inode
	// limit below, with no byte limit, must name the inodes.
	if !strings.Contains(ee.Reason(), "limit: disk") {
		t.Fatalf("Reason() = %q, want a disk limit: %s", ee.Reason(), r)
	}
	if took > 10*time.Second || len(n) > 20000 {
		t.Fatalf("the inode limit took %v and let %d files through", took, len(n))
	}
	t.Logf("killed after %d files, %v: %s", len(n), took, ee.Reason())
	// Control: with no inode limit, 20,000 files are created.
	ctl := newSandbox(t, moat.Config{Limits: moat.Limits{DiskBytes: -1, DiskInodes: -1}})
	c := python(t, ctl, fmt.Sprintf(inodeProbe, 20000, 20000))
	os.RemoveAll(filepath.Join(ctl.WorkDir(), "many"))
	mustContain(t, c, "CREATED 20000")
	// An explicit limit holds without a byte limit, and names itself.
	lim := newSandbox(t, moat.Config{Limits: moat.Limits{DiskBytes: -1, DiskInodes: 500, Timeout: 60 * time.Second}})
	l := python(t, lim, fmt.Sprintf(inodeProbe, 200000, 200000))
	os.RemoveAll(filepath.Join(lim.WorkDir(), "many"))
	mustNotContain(t, l, "CREATED")
	if ee := exitError(t, l.Err); !strings.Contains(ee.Reason(), "limit: disk-inodes") {
		t.Fatalf("Reason() = %q, want the inode limit: %s", ee.Reason(), l)
	}
	if !hasRefusal(lim, "limit", "disk-inodes") {
		t.Fatalf("no limit refusal for disk-inodes in %v", lim.Refusals())
	}
}

// A burst write cannot outrun the disk watchdog: dd of 100 MiB into a
// 20 MiB budget stops at the budget (RLIMIT_FSIZE is kept at the disk
// limit) and the kill names the disk limit. Control: without the limit
// the same dd writes 100 MiB.
func TestLimitsDiskBurst(t *testing.T) {
	need(t, "dd")
	// The budget shrinks with what was written: after 16 MiB, a second
	// burst of 16 MiB stops at what is left.
	// First, while no earlier probe's freed space is still being returned
	// to the file system (the measure is its free space).
	t.Run("second burst", func(t *testing.T) {
		need(t, "python3")
		syscall.Sync()
		work, _ := quietFS(t) // the measure is free space: a file system of its own
		sb := newSandbox(t, moat.Config{WorkDir: work, Limits: moat.Limits{DiskBytes: 20 << 20}})
		r := python(t, sb, `
import os, signal, time
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
with open("a", "wb") as f:
    f.write(b"x" * (16 << 20)); os.fsync(f.fileno())
time.sleep(0.5)
try:
    with open("b", "wb") as f:
        f.write(b"x" * (16 << 20))
    print("SECOND-OK", flush=True)
except OSError as e:
    print("SECOND-REFUSED", e.errno, flush=True)
`)
		var total int64
		for _, n := range []string{"a", "b"} {
			if st, err := os.Stat(filepath.Join(sb.WorkDir(), n)); err == nil {
				total += st.Size()
			}
			os.Remove(filepath.Join(sb.WorkDir(), n))
		}
		mustNotContain(t, r, "SECOND-OK")
		if total > 20<<20 {
			t.Fatalf("two bursts wrote %d bytes into a 20 MiB budget: %s", total, r)
		}
	})
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"dd", []string{"dd", "if=/dev/zero", "of=big", "bs=1M", "count=100"}},
		{"shell redirect", []string{"/bin/sh", "-c", "head -c 104857600 /dev/zero > big"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, moat.Config{Limits: moat.Limits{DiskBytes: 20 << 20}})
			r := inSandbox(t, sb, tc.argv...)
			st, err := os.Stat(filepath.Join(sb.WorkDir(), "big"))
			os.Remove(filepath.Join(sb.WorkDir(), "big"))
			if err == nil && st.Size() > 20<<20 {
				t.Fatalf("the burst wrote %d bytes into a 20 MiB disk budget: %s", st.Size(), r)
			}
			if r.Err == nil {
				t.Fatalf("the burst succeeded: %s", r)
			}
			if tc.name == "dd" {
				// dd itself got SIGXFSZ: moat names the disk limit.
				if ee := exitError(t, r.Err); !strings.Contains(ee.Reason(), "limit: disk") {
					t.Fatalf("Reason() = %q, want the disk limit: %s", ee.Reason(), r)
				}
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		sb := newSandbox(t, moat.Config{Limits: moat.Limits{DiskBytes: -1}})
		r := inSandbox(t, sb, "dd", "if=/dev/zero", "of=big", "bs=1M", "count=100")
		st, err := os.Stat(filepath.Join(sb.WorkDir(), "big"))
		os.Remove(filepath.Join(sb.WorkDir(), "big"))
		if r.Err != nil || err != nil || st.Size() != 100<<20 {
			t.Fatalf("control: dd without a disk limit: %v %s", err, r)
		}
	})
}

// A --cpu-time kill is reported like every other limit kill. Control:
// without the limit the same loop finishes.
func TestLimitsCPUTimeReported(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	loop := `
import time
end = time.process_time() + 2.5
while time.process_time() < end:
    pass
print("DONE", flush=True)
`
	sb := newSandbox(t, moat.Config{Limits: moat.Limits{CPUSeconds: 1, Timeout: 60 * time.Second}})
	r := python(t, sb, loop)
	mustNotContain(t, r, "DONE")
	ee := exitError(t, r.Err)
	if !strings.Contains(ee.Reason(), "limit: cpu-time") || !strings.Contains(ee.Reason(), "--cpu-time") {
		t.Fatalf("Reason() = %q, want the CPU time limit and its flag: %s", ee.Reason(), r)
	}
	if !hasRefusal(sb, "limit", "cpu-time") {
		t.Fatalf("no limit refusal for cpu-time in %v", sb.Refusals())
	}
	mustContain(t, python(t, newSandbox(t, moat.Config{}), loop), "DONE")
}

// Every kind of limit kill is recorded once as a refusal.
func TestLimitsTimeoutReported(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, moat.Config{Limits: moat.Limits{Timeout: 500 * time.Millisecond}})
	r := sh(t, sb, "sleep 5")
	if ee := exitError(t, r.Err); !strings.Contains(ee.Reason(), "limit: timeout") {
		t.Fatalf("Reason() = %q", ee.Reason())
	}
	n := 0
	for _, f := range sb.Refusals() {
		if f.Kind == "limit" {
			n++
		}
	}
	if n != 1 || !hasRefusal(sb, "limit", "timeout") {
		t.Fatalf("refusals %v, want one limit refusal for the timeout", sb.Refusals())
	}
	// Control: a command that ends by itself records nothing.
	ok := newSandbox(t, moat.Config{Limits: moat.Limits{Timeout: 5 * time.Second}})
	if r := sh(t, ok, "exit 3"); r.Code != 3 || len(ok.Refusals()) != 0 {
		t.Fatalf("control: %s, refusals %v", r, ok.Refusals())
	}
}

func hasRefusal(sb *moat.Sandbox, kind, subject string) bool {
	for _, r := range sb.Refusals() {
		if r.Kind == kind && r.Subject == subject {
			return true
		}
	}
	return false
}
