//go:build linux

package escape_test

// Resource probes: fork, memory, descriptor and disk bombs, file size and
// wall-clock limits, each against a control with the limit lifted.

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

// I11: Limits.FileSizeBytes bounds every file the command writes.
func TestLimitsFileSize(t *testing.T) {
	t.Parallel()
	script := `dd if=/dev/zero of=small bs=512 count=1 2>/dev/null && echo SMALL-OK
dd if=/dev/zero of=big bs=1024 count=64 2>/dev/null; echo "big rc=$?"
stat -c 'size=%s' big`
	r := sh(t, newSandbox(t, moat.Config{Limits: moat.Limits{FileSizeBytes: 1024}}), script)
	mustContain(t, r, "SMALL-OK")
	mustNotContain(t, r, "big rc=0")
	size := -1
	for _, f := range strings.Fields(r.Stdout) {
		if v, ok := strings.CutPrefix(f, "size="); ok {
			size, _ = strconv.Atoi(v)
		}
	}
	if size < 0 || size > 1024 {
		t.Fatalf("the file grew to %d bytes past the 1024-byte limit: %s", size, r)
	}
	// Control: with the default limit the same 64 KiB file is written.
	mustContain(t, sh(t, newSandbox(t, moat.Config{}), script), "size=65536")
}

// forkProbe forks children that sleep, up to max, and prints how many forks
// succeeded and the errno that stopped it.
func forkProbe(max int, sleep float64) string {
	return fmt.Sprintf(`
import os, time
n, err = 0, None
try:
    while n < %d:
        pid = os.fork()
        if pid == 0:
            time.sleep(%g)
            os._exit(0)
        n += 1
except OSError as e:
    err = e.errno
print("forks", n, "errno", err, flush=True)
`, max, sleep)
}

func forkCount(t *testing.T, r result) (int, string) {
	t.Helper()
	f := strings.Fields(r.Stdout)
	if len(f) != 4 || f[0] != "forks" {
		t.Fatalf("unexpected fork probe output: %s", r)
	}
	n, _ := strconv.Atoi(f[1])
	return n, f[3]
}

// Limits.Processes stops a fork bomb at the limit, long before any timeout,
// and the host is unharmed. Control: with no limit the same loop forks 200.
func TestLimitsForkBomb(t *testing.T) {
	t.Parallel()
	need(t, "python3", "bash")
	lim := moat.Limits{Processes: 64, Timeout: 20 * time.Second}
	t.Run("python", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		r := python(t, newSandbox(t, moat.Config{Limits: lim}), forkProbe(100000, 30))
		n, errno := forkCount(t, r)
		if n >= 100 || errno != strconv.Itoa(int(syscall.EAGAIN)) {
			t.Fatalf("the fork bomb forked %d times (errno %s) under a 64-process limit: %s", n, errno, r)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("the fork bomb ran %v: the timeout, not the process limit, stopped it", d)
		}
		if r.Err != nil {
			t.Fatalf("the probe did not exit cleanly: %s", r)
		}
	})
	t.Run("bash", func(t *testing.T) {
		t.Parallel()
		marker := "moat-forkbomb-" + randomHex(4)
		killMarked(t, marker)
		c := newSandbox(t, moat.Config{Limits: lim}).Command("bash", "-c", `b() { b | b & }; b; sleep 1`, marker)
		start := time.Now()
		r := runCmd(c)
		if ee, ok := r.Err.(*moat.ExitError); ok && strings.Contains(ee.Reason(), "timeout") {
			t.Fatalf("the bash fork bomb ran into the timeout: %s", r)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("the bash fork bomb ran %v", d)
		}
		mustVanish(t, marker, 2*time.Second, "after the fork bomb's command ended")
	})
	t.Run("control no limit", func(t *testing.T) {
		t.Parallel()
		r := python(t, newSandbox(t, moat.Config{Limits: moat.Limits{Processes: -1, Timeout: 20 * time.Second}}), forkProbe(200, 2))
		if n, _ := forkCount(t, r); n != 200 {
			t.Fatalf("control: without a process limit the probe forked only %d: %s", n, r)
		}
	})
	t.Cleanup(func() {
		if r := hostSh(t, "echo host-alive"); !strings.Contains(r.Stdout, "host-alive") {
			t.Errorf("the host cannot start a process after the fork bombs: %s", r)
		}
	})
}

// memoryProbe allocates size bytes one way and writes to every page; it
// prints ALLOCATED or the error.
func memoryProbe(kind string, size int64) string {
	alloc := map[string]string{
		"bytearray": `b = bytearray(SIZE); b[::4096] = b"\1" * len(b[::4096])`,
		"mmap private": `m = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
ctypes.memset(ctypes.addressof(ctypes.c_char.from_buffer(m)), 1, SIZE)`,
		// mmap.mmap(-1, n) is MAP_SHARED: Python's default anonymous map.
		"mmap shared": `m = mmap.mmap(-1, SIZE)
ctypes.memset(ctypes.addressof(ctypes.c_char.from_buffer(m)), 1, SIZE)`,
	}[kind]
	return fmt.Sprintf(`
import ctypes, mmap
SIZE = %d
try:
    %s
    print("ALLOCATED", SIZE, flush=True)
except (MemoryError, OSError) as e:
    print("FAILED", type(e).__name__, e, flush=True)
`, size, strings.ReplaceAll(alloc, "\n", "\n    "))
}

// Limits.MemoryBytes stops a single process from taking 1 GiB under a
// 256 MiB limit, however it allocates; with 2 GiB the same probes get
// 512 MiB.
func TestLimitsMemoryBomb(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	limited := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 256 << 20}})
	roomy := newSandbox(t, moat.Config{Limits: moat.Limits{MemoryBytes: 2 << 30}})
	for _, kind := range []string{"bytearray", "mmap private", "mmap shared"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := python(t, limited, memoryProbe(kind, 1<<30))
			if strings.Contains(r.Stdout, "ALLOCATED") {
				t.Fatalf("one process took and touched 1 GiB under a 256 MiB memory limit: %s", r)
			}
			if !strings.Contains(r.Stdout, "FAILED") && r.Err == nil {
				t.Fatalf("the probe neither failed nor was killed: %s", r)
			}
			// Control: with room, the same allocation of 512 MiB works.
			mustContain(t, python(t, roomy, memoryProbe(kind, 512<<20)), "ALLOCATED")
		})
	}
}

// Limits.OpenFiles stops descriptor exhaustion; the default allows 1000+.
func TestLimitsOpenFiles(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	probe := `
import os
fds, err = [], None
try:
    while len(fds) < 5000:
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    err = e.errno
print("opened", len(fds), "errno", err)
`
	count := func(r result) int {
		f := strings.Fields(r.Stdout)
		if len(f) != 4 {
			t.Fatalf("unexpected probe output: %s", r)
		}
		n, _ := strconv.Atoi(f[1])
		return n
	}
	r := python(t, newSandbox(t, moat.Config{Limits: moat.Limits{OpenFiles: 64}}), probe)
	if n := count(r); n > 64 || !strings.Contains(r.Stdout, "errno "+strconv.Itoa(int(syscall.EMFILE))) {
		t.Fatalf("opened %d descriptors under a limit of 64: %s", n, r)
	}
	if n := count(python(t, newSandbox(t, moat.Config{}), probe)); n < 1000 {
		t.Fatalf("control: the default limit allowed only %d descriptors", n)
	}
}

// rlimitProbe prints the soft and hard limits moat sets.
const rlimitProbe = `
import resource as r
for name in ("NPROC", "NOFILE", "FSIZE", "DATA", "CORE"):
    print(name, *r.getrlimit(getattr(r, "RLIMIT_" + name)))
`

// The zero Config has finite limits: processes, descriptors, file size and
// memory (half of RAM); on the host they are not all set.
func TestLimitsDefaults(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	parse := func(r result) map[string][2]int64 {
		m := map[string][2]int64{}
		for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
			f := strings.Fields(line)
			if len(f) != 3 {
				t.Fatalf("unexpected probe output: %s", r)
			}
			soft, _ := strconv.ParseInt(f[1], 10, 64)
			hard, _ := strconv.ParseInt(f[2], 10, 64)
			m[f[0]] = [2]int64{soft, hard}
		}
		return m
	}
	sb := newSandbox(t, moat.Config{})
	got := parse(python(t, sb, rlimitProbe))
	var hostNofile syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &hostNofile); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"NPROC":  moat.DefaultProcesses,
		"NOFILE": min(moat.DefaultOpenFiles, int64(hostNofile.Max)),
		"FSIZE":  moat.DefaultFileSizeBytes,
		"DATA":   hostRAM(t) / 2,
		"CORE":   0,
	}
	if sb.Report().Active("cgroup") {
		// Root with cgroups: the cgroup counts the processes instead.
		delete(want, "NPROC")
	}
	for k, v := range want {
		if got[k] != [2]int64{v, v} {
			t.Errorf("RLIMIT_%s = %v, want %d soft and hard", k, got[k], v)
		}
	}
	// Control: the host runs without the file size and data limits.
	host := parse(hostPython(t, rlimitProbe))
	if host["FSIZE"][0] != -1 || host["DATA"][0] != -1 {
		t.Fatalf("control: the host already limits file size or memory: %v", host)
	}
}

// mmapBombProbe reserves writable private memory 1 GiB at a time, without
// touching it, until refused or max GiB, and prints how many it got.
const mmapBombProbe = `
import mmap, sys
maps, err = [], None
try:
    while len(maps) < %d:
        maps.append(mmap.mmap(-1, 1 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS))
except OSError as e:
    err = e.errno
print("gib", len(maps), "errno", err)
`

// The zero Config stops a single-process memory bomb near half of RAM.
// Writable memory is counted when mapped, so the probe need not touch it:
// the bomb is cheap to run.
func TestLimitsDefaultMemoryBomb(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	ram := hostRAM(t)
	if ram < 8<<30 {
		t.Skipf("the host has %d MiB of RAM; the probe wants 8 GiB or more", ram>>20)
	}
	limit := int(2 * ram >> 30)
	gib := func(r result) int {
		f := strings.Fields(r.Stdout)
		if len(f) != 4 || f[0] != "gib" {
			t.Fatalf("unexpected probe output: %s", r)
		}
		n, _ := strconv.Atoi(f[1])
		return n
	}
	r := python(t, newSandbox(t, moat.Config{}), fmt.Sprintf(mmapBombProbe, limit))
	half := int(ram / 2 >> 30)
	if n := gib(r); n > half || n < half-2 {
		t.Fatalf("the default limit let one process map %d GiB; want about half of %d GiB: %s", n, ram>>30, r)
	}
	// Control: on the host the same probe maps twice the RAM.
	if n := gib(hostPython(t, fmt.Sprintf(mmapBombProbe, limit))); n != limit {
		t.Fatalf("control: the host mapped only %d GiB of %d", n, limit)
	}
}

// diskProbe writes n files of 1 MiB in the working directory.
const diskProbe = `
import os
n = 0
for i in range(%d):
    with open("fill-%%04d" %% i, "wb") as f:
        f.write(b"\0" * (1 << 20))
    n += 1
print("WROTE", n, flush=True)
`

// Limits.DiskBytes kills a command that fills the disk. Not parallel: the
// limit is measured on the file system's free space.
func TestLimitsDiskFill(t *testing.T) {
	need(t, "python3")
	sb := newSandbox(t, moat.Config{Limits: moat.Limits{DiskBytes: 64 << 20, Timeout: 60 * time.Second}})
	c := sb.Command("python3", "-c", fmt.Sprintf(diskProbe, 1024))
	start := time.Now()
	r := runCmd(c)
	files, _ := filepath.Glob(filepath.Join(sb.WorkDir(), "fill-*"))
	for _, f := range files {
		os.Remove(f)
	}
	if strings.Contains(r.Stdout, "WROTE") {
		t.Fatalf("the command wrote 1 GiB under a 64 MiB disk limit: %s", r)
	}
	ee := exitError(t, r.Err)
	switch {
	case strings.Contains(ee.Reason(), "disk"):
		t.Logf("killed after %d files, %v", len(files), time.Since(start))
	case strings.Contains(r.Stderr, "File too large"):
		// RLIMIT_FSIZE, lowered to the bytes left, stopped the write
		// before the watch's next sample: Python ignores SIGXFSZ and
		// exits 1 on EFBIG. The bound held; naming --disk for this
		// exit is issue 23's.
		t.Logf("stopped by the file-size limit held to the bytes left, after %d files, %v", len(files), time.Since(start))
	default:
		t.Fatalf("Reason() = %q, want it to mention the disk (%v after %v): %s", ee.Reason(), r.Err, time.Since(start), r)
	}
	if left, _ := filepath.Glob(filepath.Join(sb.WorkDir(), "fill-*")); len(left) > 0 {
		t.Fatalf("could not remove the fill files: %v", left)
	}
	// Control: without a disk limit, 80 MiB are written.
	ctl := newSandbox(t, moat.Config{Limits: moat.Limits{DiskBytes: -1}})
	cr := python(t, ctl, fmt.Sprintf(diskProbe, 80))
	if cr.Err != nil || !strings.Contains(cr.Stdout, "WROTE 80") {
		t.Fatalf("control: without a disk limit the probe could not write 80 MiB: %s", cr)
	}
}

// Limits.Timeout kills the command and its tree on time. Control: without
// it the same sleep runs to completion.
func TestLimitsTimeout(t *testing.T) {
	t.Parallel()
	marker := sleepMarker(30)
	killMarked(t, marker)
	t.Run("killed", func(t *testing.T) {
		t.Parallel()
		sb := newSandbox(t, moat.Config{Limits: moat.Limits{Timeout: time.Second}})
		start := time.Now()
		r := sh(t, sb, "sleep "+marker+" & sleep "+marker)
		d := time.Since(start)
		ee := exitError(t, r.Err)
		if !strings.Contains(ee.Reason(), "timeout") {
			t.Fatalf("Reason() = %q, want it to mention the timeout: %s", ee.Reason(), r)
		}
		if d < 900*time.Millisecond || d > 5*time.Second {
			t.Fatalf("the 1s timeout ended the command after %v", d)
		}
		mustVanish(t, marker, time.Second, "after the timeout")
	})
	t.Run("control", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		r := sh(t, newSandbox(t, moat.Config{}), "sleep 2")
		if r.Err != nil || time.Since(start) < 2*time.Second {
			t.Fatalf("control: sleep 2 without a timeout: %s after %v", r, time.Since(start))
		}
	})
}
