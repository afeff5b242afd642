package cli

import (
	"strconv"

	"github.com/moat-sandbox/moat"
)

// zeroLimitFlags are the limit flags whose 0 is below sense, each with the
// least value it takes (moat's validate.go). A limit of zero would stop
// any command, and reading it as "the default" hides the mistake, so an
// explicit 0 is a usage error; leaving the flag out keeps the default,
// and "unlimited" lifts the limit.
var zeroLimitFlags = []struct {
	name  string
	least string
}{
	{"memory", "16M"},
	{"cpu-time", strconv.Itoa(moat.MinCPUSeconds)},
	{"file-size", "1K"},
	{"processes", strconv.Itoa(moat.MinProcesses)},
	{"open-files", strconv.Itoa(moat.MinOpenFiles)},
	{"disk", "1M"},
	{"disk-inodes", strconv.Itoa(moat.MinDiskInodes)},
}

// checkZeroLimits refuses a limit flag given as 0.
func (f *sandboxFlags) checkZeroLimits() error {
	values := map[string]int64{
		"memory": int64(f.memory), "cpu-time": f.cpuTime.n, "file-size": int64(f.fileSize),
		"processes": f.processes.n, "open-files": f.openFiles.n, "disk": int64(f.disk), "disk-inodes": f.diskInodes.n,
	}
	for _, z := range zeroLimitFlags {
		if f.fs.Changed(z.name) && values[z.name] == 0 {
			return usagef("--%s 0: want at least %s, or unlimited; leave the flag out for the default", z.name, z.least)
		}
	}
	return nil
}
