package statedir

import (
	"os"
	"strconv"
	"strings"
)

// hostProcs reads processes from /proc.
type hostProcs struct{}

func (hostProcs) self() (string, string, bool) {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", "", false
	}
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	boot := strings.TrimSpace(string(b))
	if err != nil || boot == "" || strings.ContainsAny(ns+boot, " \t\n") {
		return "", "", false
	}
	return ns, boot, true
}

func (hostProcs) stat(pid int) (uint64, byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseProcStat(b)
}
