package linux

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// memoryPollInterval is how often the init adds up the sandbox's memory.
const memoryPollInterval = 50 * time.Millisecond

// memoryWatch bounds the memory of the whole sandbox, which rlimits cannot:
// RLIMIT_DATA is per process and does not count shared memory. The init,
// PID 1 of the sandbox's PID namespace and a member of its IPC and network
// namespaces, sees exactly the sandbox's processes in its /proc, its SysV
// objects in /proc/sysvipc, its /dev/shm and its sockets. It adds up their
// resident memory (shared pages included), SysV shared memory, message
// queues and semaphores, /dev/shm and socket buffers (memoryUse), and
// once the sum passes the limit it kills every process and removes what
// would outlive them: SysV objects and the files in /dev/shm. Memory that
// is both mapped and shared (an attached segment, a mapped /dev/shm file)
// counts twice, which errs on the side of the limit.
type memoryWatch struct {
	limit    int64
	ownTCP4  int  // IPv4 TCP sockets of the namespace that are moat's listeners
	shm      int  // the sandbox's /dev/shm, opened before the pivot
	shmOK    bool // shm is open
	exceeded atomic.Bool
	mu       sync.Mutex
	detail   string // what was counted when the limit was passed
}

// openShm opens the sandbox's /dev/shm, given by its path under the root
// being built, so it is counted whatever the init's root is.
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
	u.sockets, _ = socketBytes(w.ownTCP4)
	return u
}

func (w *memoryWatch) run() {
	for range time.Tick(memoryPollInterval) {
		if u := w.sample(); u.total() > w.limit {
			w.mu.Lock()
			w.detail = u.String()
			w.mu.Unlock()
			w.exceeded.Store(true)
			_ = unix.Kill(-1, unix.SIGKILL)
			removeSysV()
			if w.shmOK {
				clearDir(w.shm)
			}
		}
	}
}

// takeExceeded reports whether the limit was passed since the last call,
// and what was counted then.
func (w *memoryWatch) takeExceeded() (bool, string) {
	if !w.exceeded.Swap(false) {
		return false, ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return true, w.detail
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
// process in this /proc but our own.
func residentBytes() int64 {
	names, err := readDirNames("/proc")
	if err != nil {
		return 0
	}
	self := strconv.Itoa(os.Getpid())
	var total int64
	for _, name := range names {
		if name == self || atoi(name) <= 0 {
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

// statusKB returns the kB value of a /proc/PID/status field.
func statusKB(status []byte, field string) int64 {
	i := bytes.Index(status, []byte(field))
	if i < 0 {
		return 0
	}
	rest := bytes.Fields(status[i+len(field):])
	if len(rest) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(rest[0]), 10, 64)
	return n
}
