package runjournal

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/moat-sandbox/moat/internal/backend/linux"
)

// selfOwner identifies this process for a journal: PID, start time (field
// 22 of /proc/PID/stat), PID namespace and boot ID. Unknown parts stay
// empty, and an owner with one unknown is never judged dead.
func selfOwner() runOwner {
	o := runOwner{Pid: os.Getpid(), Start: selfStart()}
	o.PidNS, o.Boot = pidNSAndBoot()
	return o
}

// pidNSAndBoot returns this process's PID namespace and the boot ID,
// read once per process.
func pidNSAndBoot() (string, string) {
	selfIDs.once.Do(func() {
		selfIDs.ns, selfIDs.boot = readPidNSAndBoot()
		selfIDs.start, _ = procStartState(os.Getpid())
	})
	return selfIDs.ns, selfIDs.boot
}

var selfIDs struct {
	once     sync.Once
	ns, boot string
	start    uint64
}

// selfStart is this process's start time, read once.
func selfStart() uint64 {
	pidNSAndBoot()
	return selfIDs.start
}

func readPidNSAndBoot() (string, string) {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", ""
	}
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", ""
	}
	return ns, strings.TrimSpace(string(b))
}

// procStartState returns the start time and state letter of pid; both
// zero when there is no such process or its stat cannot be parsed.
func procStartState(pid int) (uint64, byte) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, 0
	}
	return v, f[0][0]
}

// ownerDead reports whether the process that wrote a journal is certainly
// gone: another boot, or in this PID namespace a PID that is free, a
// zombie, or another process. Anything uncertain counts as alive.
func ownerDead(o runOwner) bool {
	ns, boot := pidNSAndBoot()
	if ns == "" || boot == "" || o.PidNS == "" || o.Boot == "" || o.Start == 0 {
		return false
	}
	if o.Boot != boot {
		return true
	}
	if o.PidNS != ns {
		return false // another namespace's PID
	}
	if o.Pid == os.Getpid() {
		return o.Start != selfStart() // this process, or one before it with its PID
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(o.Pid)); os.IsNotExist(err) {
		return true
	}
	start, state := procStartState(o.Pid)
	switch {
	case state == 'Z' || state == 'X':
		return true
	case state == 0:
		return false
	}
	return start != o.Start
}

// sweepDenyPlaceholder removes a dead run's placeholder at a denied path
// (internal/backend/linux).
func sweepDenyPlaceholder(d string) bool { return linux.SweepDenyGuard(d) }

// sweepGitPlaceholders removes a dead run's hooks and config placeholders
// in the repository g and returns what it removed.
func sweepGitPlaceholders(g string) []string { return linux.SweepGitPlaceholders(g) }
