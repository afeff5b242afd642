package moattest

import (
	"os"
	"strconv"
	"strings"
)

// Zygotes lists the pids of this process's sandbox zygotes: its children
// whose command line is moat-zygote.
func Zygotes() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.HasPrefix(string(cmdline), "moat-zygote") {
			continue
		}
		// The parent's pid is the second field after the command's ")".
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == self {
			out = append(out, pid)
		}
	}
	return out
}
