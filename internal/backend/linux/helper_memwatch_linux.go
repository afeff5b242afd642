package linux

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// memoryPollInterval is how often, at most, the zygote adds up the
// sandbox's memory.
const memoryPollInterval = 50 * time.Millisecond

// memoryWatchDuty bounds the share of one CPU the watch may take: after a
// sample that cost c of its thread's CPU time, it waits at least
// memoryWatchDuty*c. The cost of a sample grows with the sandbox's
// processes; the host's share of it does not (at most
// 1/memoryWatchDuty of a CPU), the interval grows instead. A sandbox's
// process count is bounded (Limits.Processes), and so is the longest
// interval.
const memoryWatchDuty = 20

// A sample that could not measure is taken again memoryRetries times,
// memoryRetryDelay apart, before the sandbox is ended: a process exiting
// between two reads can look like a leader whose threads hide. What stays
// unmeasurable for that long is ended.
const (
	memoryRetryDelay = 10 * time.Millisecond
	memoryRetries    = 10
)

// memoryWatch bounds the memory of the whole sandbox, which rlimits cannot:
// RLIMIT_DATA is per process and does not count shared memory. The
// zygote's watch runs on a thread of its own that joined the sandbox's IPC
// namespace; after the pivot the zygote's /proc is the sandbox's, and it
// is a member of its network namespace, so it sees exactly the sandbox's
// processes, its SysV objects in /proc/sysvipc, its /dev/shm and its
// sockets. It adds up their resident memory (shared pages included, see
// procSampler), SysV shared memory, message queues
// and semaphores, /dev/shm, socket buffers and what the zygote holds for
// the sandbox's pending supervised calls (memoryUse), and once the sum
// passes the limit it has the init kill every process and removes what
// would outlive them: SysV objects and the files in /dev/shm. Memory that
// is both mapped and shared (an attached segment, a mapped /dev/shm file,
// a shared mapping in several processes) counts once per
// mapping and once more for the object, which errs on the side of the
// limit. A watch that cannot measure (a /proc it cannot read, a process it
// cannot see into, descriptors run out) ends the sandbox the same way and
// says why: it never counts what it cannot see as zero.
type memoryWatch struct {
	limit   int64
	ownTCP4 int   // IPv4 TCP sockets of the namespace that are moat's listeners
	shm     int   // the sandbox's /dev/shm
	shmErr  error // why /dev/shm could not be opened, if it could not
	ipcFD   int   // the sandbox's IPC namespace, or -1 when the zygote's is it
	proc    int   // the host's /proc, opened before the pivot, where the watch's thread exists
	initCh  int   // the zygote's channel to the init, which kills and tells moat
	nice    int   // the sandbox's CPU and I/O priority, which the watch's thread takes
	ioprio  int
	guard   *sockGuard   // the socket guard, whose pending calls count, or nil
	gate    *commandGate // told of each command the zygote starts
	quiet   bool         // whether a tick may skip the full sample (not on nohz_full hosts)
	cpus    int          // the host's possible CPUs, 0 if unknown (quietWait)
}

// openShm opens the sandbox's /dev/shm.
func (w *memoryWatch) openShm(path string) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		w.shmErr = fmt.Errorf("open %s: %w", path, err)
		return
	}
	w.shm = fd
}

// sample measures the sandbox's memory now; an error says what could not
// be measured.
func (w *memoryWatch) sample(s *procSampler) (memoryUse, error) {
	var u memoryUse
	var err error
	if u.resident, err = s.processes("1"); err != nil {
		return u, err
	}
	if u.sysvShm, u.sysvMsg, u.sysvSem, err = sysvBytes(); err != nil {
		return u, fmt.Errorf("SysV objects: %w", err)
	}
	if u.posixShm, err = tmpfsUsed(w.shm); err != nil {
		return u, fmt.Errorf("/dev/shm: %w", err)
	}
	if u.sockets, err = socketBytes(w.ownTCP4, w.proc); err != nil {
		return u, fmt.Errorf("socket buffers: %w", err)
	}
	if w.guard != nil {
		u.helper = w.guard.budget.heldBytes()
	}
	return u, nil
}

// run watches until the process ends, on a thread of its own.
func (w *memoryWatch) run() {
	runtime.LockOSThread() // never unlocked: the thread joins the sandbox's IPC namespace
	if w.ipcFD >= 0 {
		if err := unix.Setns(w.ipcFD, unix.CLONE_NEWIPC); err != nil {
			// Without the namespace the watch would count and clear
			// the wrong objects: end the sandbox instead.
			w.kill("memory watch: join the IPC namespace: " + err.Error())
			return
		}
	}
	// The watch works for the sandbox: it runs at the sandbox's
	// priority, not the zygote's.
	_ = applyPriority(w.nice, w.ioprio)
	if w.shmErr != nil {
		w.kill(unmeasurable(w.shmErr))
		return
	}
	s, err := newProcSampler("/proc") // the sandbox's, after the pivot

	if err != nil {
		w.kill(unmeasurable(err))
		return
	}
	defer s.close()
	// The waits and the quiet ticks run on a goroutine of their own,
	// not on this locked thread, which wakes only for a full sample
	// (helper_memquiet_linux.go).
	ticks := w.startTicks(s)
	defer close(ticks.req)
	wait := memoryPollInterval
	failed := 0
	// last is the threads' counts read just before the last full sample
	// that measured, lastFull when, lastGen the commands started by then,
	// headroom what it left below the limit; last is nil when no quiet
	// tick may skip a sample.
	var last, spare cpuSnapshot
	var lastFull time.Time
	var lastGen uint64
	var headroom int64
	var socks sockSig
	sockBuf := make([]byte, 2048)
	for {
		// The first sample after one interval, as every other: nothing
		// has been allocated at the start, and a command starting then
		// needs the CPU more.
		ticks.req <- quietTicks{wait: wait, last: last, since: lastFull, gen: lastGen, headroom: headroom, socks: socks}
		gen := <-ticks.due
		before := threadCPU()
		var now cpuSnapshot
		if w.quiet {
			// What the next quiet ticks compare with, read before
			// the sample so that what changes during it is seen.
			var ok bool
			if socks, ok = w.sockets(sockBuf); ok {
				now, _ = s.snapshot("1", spare)
			}
		}
		u, err := w.sample(s)
		cost := threadCPU() - before
		switch {
		case err != nil && failed < memoryRetries:
			failed++
			wait = memoryRetryDelay
			last = nil
			continue
		case err != nil:
			w.kill(unmeasurable(err))
			w.clearShared()
		case u.total() > w.limit:
			w.kill(u.String())
			w.clearShared()
		}
		failed = 0
		headroom = w.limit - u.total()
		if err != nil {
			headroom = 0
		}
		wait = quietWait(headroom, w.cpus, cost)
		last, spare = now, last
		lastFull, lastGen = time.Now(), gen
		if err == nil && s.seen == 0 && w.gate.started.Load() == gen {
			// No process but the init, and no command started
			// since before the walk: nothing can grow until the
			// next one starts.
			<-w.gate.wake
			last, wait = nil, memoryPollInterval
		}
	}
}

// pollInterval is the wait after a sample that cost cost of CPU time.
func pollInterval(cost time.Duration) time.Duration {
	return max(memoryPollInterval, cost*memoryWatchDuty)
}

// UnmeasuredPrefix starts the kill detail of a watch that could not
// measure, so that moat does not report it as memory used.
const UnmeasuredPrefix = "unmeasured: "

// unmeasurable is the kill detail for a watch that could not measure.
func unmeasurable(err error) string {
	return UnmeasuredPrefix + err.Error()
}

// clearShared removes what outlives the sandbox's processes: SysV objects
// and the files in /dev/shm.
func (w *memoryWatch) clearShared() {
	removeSysV()
	if w.shmErr == nil {
		clearDir(w.shm)
	}
}

// threadCPU returns the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// kill has the init kill every process of the sandbox, and keep detail
// (what was counted) for moat.
func (w *memoryWatch) kill(detail string) {
	msg := append([]byte{initKill}, detail...)
	_, _ = unix.Write(w.initCh, msg[:min(len(msg), 1+initDetailMax)])
}

// clearDir removes everything in the open directory fd.
func clearDir(fd int) {
	dir := "/proc/self/fd/" + strconv.Itoa(fd)
	names, err := readDirNames(dir)
	if err != nil {
		return
	}
	for _, name := range names {
		_ = os.RemoveAll(dir + "/" + name)
	}
}

// statusKB returns the kB value of a /proc/PID/status field, which must
// start a line: the first line, Name:, is the process's own choice
// (prctl(PR_SET_NAME, "VmRSS: 0") fits), and must not be taken for a
// field.
func statusKB(status []byte, field string) int64 {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte(field))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		n, _ := strconv.ParseInt(string(f[0]), 10, 64)
		return n
	}
	return 0
}
