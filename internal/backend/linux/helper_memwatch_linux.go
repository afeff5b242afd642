package linux

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// memoryPollInterval is how often the zygote adds up the sandbox's memory.
const memoryPollInterval = 50 * time.Millisecond

// memoryWatch bounds the memory of the whole sandbox, which rlimits cannot:
// RLIMIT_DATA is per process and does not count shared memory. The
// zygote's watch runs on a thread of its own that joined the sandbox's IPC
// namespace; after the pivot the zygote's /proc is the sandbox's, and it
// is a member of its network namespace, so it sees exactly the sandbox's
// processes, its SysV objects in /proc/sysvipc, its /dev/shm and its
// sockets. It adds up their resident memory (shared pages included), SysV
// shared memory, message queues and semaphores, /dev/shm and socket
// buffers (memoryUse), and once the sum passes the limit it has the init
// kill every process and removes what would outlive them: SysV objects
// and the files in /dev/shm. Memory that is both mapped and shared (an
// attached segment, a mapped /dev/shm file) counts twice, which errs on
// the side of the limit.
type memoryWatch struct {
	limit   int64
	ownTCP4 int  // IPv4 TCP sockets of the namespace that are moat's listeners
	shm     int  // the sandbox's /dev/shm
	shmOK   bool // shm is open
	ipcFD   int  // the sandbox's IPC namespace, or -1 when the zygote's is it
	proc    int  // the host's /proc, opened before the pivot, where the watch's thread exists
	initCh  int  // the zygote's channel to the init, which kills and tells moat
}

// openShm opens the sandbox's /dev/shm.
func (w *memoryWatch) openShm(path string) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		w.shm, w.shmOK = fd, true
	}
}

// sample measures the sandbox's memory now.
func (w *memoryWatch) sample() memoryUse {
	u := memoryUse{resident: residentBytes()}
	u.sysvShm, u.sysvMsg, u.sysvSem = sysvBytes()
	if w.shmOK {
		u.posixShm = tmpfsUsed(w.shm)
	}
	u.sockets, _ = socketBytes(w.ownTCP4, w.proc)
	return u
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
	for range time.Tick(memoryPollInterval) {
		if u := w.sample(); u.total() > w.limit {
			w.kill(u.String())
			removeSysV()
			if w.shmOK {
				clearDir(w.shm)
			}
		}
	}
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

// residentBytes adds up VmRSS (anonymous, file and shared memory) of every
// process in the sandbox's /proc but the init: moat's, a fork of the
// zygote whose pages are the zygote's.
func residentBytes() int64 {
	names, err := readDirNames("/proc")
	if err != nil {
		return 0
	}
	var total int64
	for _, name := range names {
		if name == "1" || atoi(name) <= 0 {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/status")
		if err != nil {
			continue
		}
		total += statusKB(b, "VmRSS:") * 1024
	}
	return total
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
