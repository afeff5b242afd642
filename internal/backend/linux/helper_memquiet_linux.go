package linux

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A sandbox that waits costs the watch nothing it need not spend. Memory
// grows only while one of the sandbox's threads runs: a page fault, a
// write to /dev/shm, a SysV call, a send is work done on the CPU by the
// thread that asks for it. So between two full samples the watch reads,
// each tick, only what the scheduler counts for every thread of the
// sandbox (/proc/PID/task/TID/schedstat: the time it ran, in
// nanoseconds, and how many times it was put on a CPU). When the same
// threads show exactly the same counts as just before the last full
// sample, none of them has run since (and no command was started, which
// is the only other way a thread appears): the memory is what that sample
// measured, which was under the limit, and the full sample (the /proc
// walk, SysV, /dev/shm, the socket dump) is skipped. Any change (a thread
// that ran, a new one, one gone, a count that cannot be read) takes the
// full sample at once, on the same tick as before: the watch is never
// later to see an allocation than it was. A thread that starts to run
// raises its count of runs at once; one that keeps running raises its
// time at every scheduler tick; one that stops adds what it ran. A CPU
// without scheduler ticks while one task runs (nohz_full) could hide a
// running thread: on such a host the watch always takes full samples.
//
// What grows without any of the sandbox's threads running is what others
// send into its sockets' receive buffers (and fragments that wait for
// reassembly). A quiet tick reads the sockstat files of the sandbox's
// network namespace too (sockSig): a socket opened or closed, fragments,
// and while the sandbox has a TCP or UDP socket other than moat's own
// listeners, any change in the memory TCP or UDP hold on the host, take
// the full sample. The kernel keeps up to 1 MiB a CPU of that memory
// aside before it counts it (per-CPU reserves), which is what may arrive
// unseen. A full sample is taken at least every quietFullInterval all
// the same.
//
// A sandbox with no process but its init has nothing that could grow:
// the watch then sleeps until the zygote starts the next command
// (commandStarting), and takes its first sample one interval later, as
// at the start.
const quietFullInterval = 10 * time.Second

// Between two checks the watch waits longer the farther the sandbox is
// from its limit. Real memory grows no faster than the kernel can clear
// pages for it, at most quietGrowthPerCPU bytes a second on each CPU, a
// generous bound (a core clears a few GiB a second; the fastest, with
// huge pages, some tens). So after a check that found headroom bytes left,
// the next one comes within headroom/(CPUs*quietGrowthPerCPU): by then the
// sandbox cannot have passed the limit. Once that is shorter than the
// interval of before (memoryPollInterval), the interval of before holds:
// the sandbox is never over its limit for longer than before.
const quietGrowthPerCPU = 32 << 30

// quietWait is the wait after a check that found headroom bytes left and
// cost cost, with cpus CPUs on the host.
func quietWait(headroom int64, cpus int, cost time.Duration) time.Duration {
	floor := pollInterval(cost)
	if headroom <= 0 || cpus <= 0 {
		return floor
	}
	d := time.Duration(float64(headroom) / float64(cpus) / quietGrowthPerCPU * float64(time.Second))
	return max(floor, min(d, quietFullInterval))
}

// possibleCPUs counts the CPUs the host could run (possible, not only
// online: one brought online later counts already), from the host's /sys,
// read before the pivot; 0 when it cannot tell, and then the watch keeps
// the interval of before.
func possibleCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return 0
	}
	return parseCPUList(string(b))
}

// parseCPUList counts the CPUs of a kernel CPU list such as "0-3,8,10-11";
// 0 when it is malformed.
func parseCPUList(s string) int {
	n := 0
	for part := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		if b-a >= 1<<16 || n+b-a+1 > 1<<16 {
			return 0
		}
		n += b - a + 1
	}
	return n
}

// threadRun is what the scheduler counts for one thread: the time it ran
// and how many times it was put on a CPU.
type threadRun struct{ runtime, runs uint64 }

// cpuSnapshot is the threadRun of every thread of the sandbox, keyed by
// "PID/TID".
type cpuSnapshot map[string]threadRun

// same reports whether b holds exactly the threads of a, with the same
// counts.
func (a cpuSnapshot) same(b cpuSnapshot) bool {
	if a == nil || b == nil || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// snapshot reads the threadRun of every thread of every process but skip
// (the init) into into, cleared first. An error (schedstat missing, a
// thread gone between the listing and the read) means only that the
// watch must take a full sample.
func (s *procSampler) snapshot(skip string, into cpuSnapshot) (cpuSnapshot, error) {
	if into == nil {
		into = cpuSnapshot{}
	}
	clear(into)
	s.release()
	pids, err := s.list(".")
	if err != nil {
		return nil, err
	}
	for _, pid := range pids {
		if pid == skip || atoi(pid) <= 0 {
			continue
		}
		tids, err := s.list(pid + "/task")
		if err != nil {
			return nil, err
		}
		for _, tid := range tids {
			if atoi(tid) <= 0 {
				continue
			}
			key := pid + "/task/" + tid
			fd, err := unix.Openat(s.proc, key+"/schedstat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return nil, err
			}
			r, err := s.schedstatAt(fd, key)
			if err != nil || len(s.held) >= quietHeldMax {
				unix.Close(fd)
			} else {
				s.held[key] = fd
			}
			if err != nil {
				return nil, err
			}
			into[key] = r
		}
	}
	return into, nil
}

// quietHeldMax is how many threads' schedstat files the sampler keeps
// open between ticks, so that a tick costs one read each; the threads
// beyond are read by path.
const quietHeldMax = 64

// release closes the schedstat files the sampler holds.
func (s *procSampler) release() {
	for key, fd := range s.held {
		unix.Close(fd)
		delete(s.held, key)
	}
}

// schedstat reads the schedstat of thread key ("PID/task/TID"), through
// the file held open for it if there is one. A thread that has ended
// reads ESRCH there, and ENOENT by path.
func (s *procSampler) schedstat(key string) (threadRun, error) {
	if fd, ok := s.held[key]; ok {
		return s.schedstatAt(fd, key)
	}
	fd, err := unix.Openat(s.proc, key+"/schedstat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return threadRun{}, err
	}
	defer unix.Close(fd)
	return s.schedstatAt(fd, key)
}

// schedstatAt reads the schedstat file open at fd from its start:
// "runtime wait runs".
func (s *procSampler) schedstatAt(fd int, key string) (threadRun, error) {
	var n int
	for {
		// Raw: a read of a few bytes from the kernel, which must not
		// wake the runtime's monitor thread at every tick.
		b := s.buf[:256]
		r, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return threadRun{}, e
		}
		n = int(r)
		break
	}
	r, ok := parseSchedstat(s.buf[:n])
	if !ok {
		return r, fmt.Errorf("%s/schedstat: unexpected contents %q", key, s.buf[:min(n, 64)])
	}
	return r, nil
}

// parseSchedstat parses "runtime wait runs\n", three decimal counters.
func parseSchedstat(b []byte) (threadRun, bool) {
	f := bytes.Fields(b)
	if len(f) != 3 {
		return threadRun{}, false
	}
	rt, err1 := strconv.ParseUint(string(f[0]), 10, 64)
	runs, err2 := strconv.ParseUint(string(f[2]), 10, 64)
	if err1 != nil || err2 != nil {
		return threadRun{}, false
	}
	return threadRun{runtime: rt, runs: runs}, true
}

// ticklessCPUs reports whether the host runs CPUs without scheduler ticks
// (nohz_full), or cannot tell; read before the pivot, from the host's
// /sys.
func ticklessCPUs() bool {
	b, err := os.ReadFile("/sys/devices/system/cpu/nohz_full")
	if os.IsNotExist(err) {
		return false // a kernel without CONFIG_NO_HZ_FULL
	}
	if err != nil {
		return true
	}
	s := string(bytes.TrimSpace(b))
	return s != "" && s != "(null)"
}

// quietTicks asks the ticking goroutine to wait wait, then tick until a
// full sample is due: when a thread of last ran or changed, a command
// was started since gen, or since is quietFullInterval ago. headroom is
// what the last full sample left below the limit.
type quietTicks struct {
	wait     time.Duration
	last     cpuSnapshot
	since    time.Time
	gen      uint64
	headroom int64
	socks    sockSig
}

// ticker is the goroutine that waits and ticks for the watch: req takes a
// quietTicks, due answers with the commands started when the full sample
// became due.
type ticker struct {
	req chan quietTicks
	due chan uint64
}

// startTicks starts the goroutine that waits and ticks. It is not locked
// to a thread: a tick costs one wake of whatever thread runs it, not a
// hand-over to the watch's own, and its reads are raw system calls, which
// do not wake the runtime's monitor thread either.
func (w *memoryWatch) startTicks(s *procSampler) ticker {
	t := ticker{req: make(chan quietTicks), due: make(chan uint64)}
	go func() {
		buf := make([]byte, 2048)
		for r := range t.req {
			t.due <- w.tick(s, r, buf)
		}
	}()
	return t
}

// tick waits r.wait, then ticks while nothing can have grown, and
// returns the commands started when a full sample became due.
func (w *memoryWatch) tick(s *procSampler, r quietTicks, buf []byte) uint64 {
	wait := r.wait
	for {
		time.Sleep(wait)
		before := rawThreadCPU()
		gen := w.gate.started.Load()
		if !w.quiet || r.last == nil || gen != r.gen || time.Since(r.since) >= quietFullInterval || !s.unchanged(r.last) {
			return gen
		}
		if socks, ok := w.sockets(buf); !ok || socks != r.socks {
			return gen
		}
		// No thread of the sandbox ran since the last full sample:
		// its memory is what that measured.
		wait = quietWait(r.headroom, w.cpus, max(rawThreadCPU()-before, 0))
	}
}

// rawThreadCPU is threadCPU without telling the runtime of the system
// call (a vDSO does not serve this clock).
func rawThreadCPU() time.Duration {
	var ts unix.Timespec
	if _, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// commandGate lets the watch sleep while the sandbox has no process: the
// zygote calls commandStarting before each fork, the watch reads started
// before a sample and parks only if it did not move.
type commandGate struct {
	started atomic.Uint64
	wake    chan struct{}
}

func newCommandGate() *commandGate { return &commandGate{wake: make(chan struct{}, 1)} }

// commandStarting is called by the zygote before it forks a command.
func (g *commandGate) commandStarting() {
	g.started.Add(1)
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// unchanged reports whether every thread of last still exists and shows
// the same counts. It lists nothing: no thread can appear while none of
// the sandbox's threads runs (a fork is work on the CPU) and the zygote
// starts no command, which the caller checks, and one that ended cannot
// be read.
func (s *procSampler) unchanged(last cpuSnapshot) bool {
	if last == nil {
		return false
	}
	for key, was := range last {
		r, err := s.schedstat(key)
		if err != nil || r != was {
			return false
		}
	}
	return true
}

// sockSig is what the sockstat files of the sandbox's network namespace
// say of its sockets: the sockets in use of each kind, the memory of
// fragments being reassembled (counted per namespace) and, where the
// namespace has TCP or UDP sockets other than moat's own listeners, the
// memory that TCP and UDP hold (counted for the whole host: the one
// counter that grows when others send into the sandbox's receive
// buffers). A quiet tick skips the full sample only while it is the
// same as before the last one.
type sockSig struct {
	inuse          [8]int // TCP, UDP, UDPLITE, RAW, TCP6, UDP6, UDPLITE6, RAW6
	frag, frag6    int64
	tcpMem, udpMem int64 // -1 when the namespace has no such socket to receive
}

// sockstatLabels are the labels of sockSig.inuse, in order.
var sockstatLabels = [8]string{"TCP:", "UDP:", "UDPLITE:", "RAW:", "TCP6:", "UDP6:", "UDPLITE6:", "RAW6:"}

// parseSockstat reads sockstat followed by sockstat6 (b) into a sockSig;
// ownTCP4 of the IPv4 TCP sockets are moat's listeners. false when a
// line or number it needs is missing.
func parseSockstat(b []byte, ownTCP4 int) (sockSig, bool) {
	var sig sockSig
	found := 0
	var tcpMem, udpMem int64 = -1, -1
	frags := 0
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) < 3 || len(f)%2 != 1 {
			continue
		}
		label := string(f[0])
		val := func(key string) (int64, bool) {
			for i := 1; i+1 < len(f); i += 2 {
				if string(f[i]) == key {
					n, err := strconv.ParseInt(string(f[i+1]), 10, 64)
					return n, err == nil && n >= 0
				}
			}
			return 0, false
		}
		switch label {
		case "FRAG:", "FRAG6:":
			m, ok := val("memory")
			if !ok {
				return sig, false
			}
			if label == "FRAG:" {
				sig.frag = m
			} else {
				sig.frag6 = m
			}
			frags++
			continue
		}
		for i, l := range sockstatLabels {
			if l != label {
				continue
			}
			n, ok := val("inuse")
			if !ok || n > 1<<31 {
				return sig, false
			}
			sig.inuse[i] = int(n)
			found |= 1 << i
			switch label {
			case "TCP:":
				if tcpMem, ok = val("mem"); !ok {
					return sig, false
				}
			case "UDP:":
				if udpMem, ok = val("mem"); !ok {
					return sig, false
				}
			}
		}
	}
	if found != 1<<len(sockstatLabels)-1 || frags != 2 {
		return sig, false
	}
	sig.tcpMem, sig.udpMem = -1, -1
	if sig.inuse[0] > ownTCP4 || sig.inuse[4] > 0 {
		sig.tcpMem = tcpMem
	}
	if sig.inuse[1] > 0 || sig.inuse[5] > 0 || sig.inuse[2] > 0 || sig.inuse[6] > 0 {
		sig.udpMem = udpMem
	}
	return sig, true
}

// sockets reads the sockSig of the calling thread's network namespace
// (the sandbox's) through the host's /proc, with raw system calls (see
// schedstatAt).
func (w *memoryWatch) sockets(buf []byte) (sockSig, bool) {
	n := 0
	for _, name := range []string{"thread-self/net/sockstat", "thread-self/net/sockstat6"} {
		m, ok := rawReadFile(w.proc, name, buf[n:])
		if !ok || n+m >= len(buf) {
			return sockSig{}, false
		}
		n += m
	}
	return parseSockstat(buf[:n], w.ownTCP4)
}

// rawReadFile reads the start of the file at path under dir into b with
// raw system calls.
func rawReadFile(dir int, path string, b []byte) (int, bool) {
	p, err := unix.BytePtrFromString(path)
	if err != nil || len(b) == 0 {
		return 0, false
	}
	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dir), uintptr(unsafe.Pointer(p)), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return 0, false
	}
	defer unix.RawSyscall(unix.SYS_CLOSE, fd, 0, 0)
	n := 0
	for n < len(b) {
		r, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, false
		}
		if r == 0 {
			break
		}
		n += int(r)
	}
	return n, true
}
