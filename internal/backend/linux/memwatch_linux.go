package linux

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// memoryPollInterval is how often the init adds up the sandbox's memory.
const memoryPollInterval = 50 * time.Millisecond

// memoryWatch bounds the memory of the whole sandbox, which rlimits cannot:
// RLIMIT_DATA is per process and does not count shared memory. The init,
// PID 1 of the sandbox's PID namespace, sees exactly the sandbox's
// processes in its /proc; it adds up their resident memory, shared pages
// included, and kills them all once the sum passes the limit.
type memoryWatch struct {
	limit    int64
	exceeded atomic.Bool
}

func (w *memoryWatch) run() {
	for range time.Tick(memoryPollInterval) {
		if residentBytes() > w.limit {
			w.exceeded.Store(true)
			_ = unix.Kill(-1, unix.SIGKILL)
		}
	}
}

// takeExceeded reports whether the limit was passed since the last call.
func (w *memoryWatch) takeExceeded() bool { return w.exceeded.Swap(false) }

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
