package moat

import (
	"strconv"

	"github.com/moat-sandbox/moat/internal/size"
)

// The least value each limit accepts, when set (a positive value). Below
// them not even a trivial command starts (measured: `sh -c 'ls | cat'`
// and `python3 -c 'print(1)'`), or the limit means nothing a person could
// want; Validate refuses such a value as a [*ConfigError] that names the
// least one. Zero keeps the default and a negative value is unlimited,
// as for every limit.
const (
	// MinMemoryBytes is the least Limits.MemoryBytes: 16 MiB, what a
	// Python interpreter needs to start.
	MinMemoryBytes = 16 << 20
	// MinProcesses is the least Limits.Processes: the sandbox's own init
	// and helper threads count against it; 14 let `sh -c 'ls | cat'`
	// run, 16 leave room.
	MinProcesses = 16
	// MinFileSizeBytes is the least Limits.FileSizeBytes: 1 KiB.
	MinFileSizeBytes = 1 << 10
	// MinDiskBytes is the least Limits.DiskBytes: 1 MiB, so that the
	// disk watch's measure of free space (whole blocks, and what the file
	// system itself moves) is small against it.
	MinDiskBytes = 1 << 20
	// MinDiskInodes is the least Limits.DiskInodes: 16 files and
	// directories.
	MinDiskInodes = 16
	// MinCPUSeconds is the least Limits.CPUSeconds: one second.
	MinCPUSeconds = 1
)

// limitMinimum is one limit's least value and how its message names it.
type limitMinimum struct {
	field string // the *ConfigError's Field
	value int64
	least int64
	size  bool // a byte count, shown with its unit
}

// checkLimitMinimums refuses a positive limit below its least value; zero
// (the default) and negative values (unlimited) pass. Open files have
// their own check (checkOpenFiles).
func checkLimitMinimums(l Limits) error {
	for _, m := range []limitMinimum{
		{"limits: memory", l.MemoryBytes, MinMemoryBytes, true},
		{"limits: processes", l.Processes, MinProcesses, false},
		{"limits: file size", l.FileSizeBytes, MinFileSizeBytes, true},
		{"limits: disk", l.DiskBytes, MinDiskBytes, true},
		{"limits: disk inodes", l.DiskInodes, MinDiskInodes, false},
		{"limits: cpu time", l.CPUSeconds, MinCPUSeconds, false},
	} {
		if m.value > 0 && m.value < m.least {
			least := strconv.FormatInt(m.least, 10)
			if m.size {
				least = sizeWords(m.least)
			}
			return &ConfigError{Field: m.field, Value: strconv.FormatInt(m.value, 10), Problem: "below the least that lets a command start; want at least " + least + ", or unlimited"}
		}
	}
	return nil
}

// sizeWords spells a least size the way the flags take it, with the
// bytes: "16M (16777216 bytes)"; a count no suffix divides is "N bytes".
func sizeWords(n int64) string {
	bytes := strconv.FormatInt(n, 10)
	if s := size.Format(n); s != bytes {
		return s + " (" + bytes + " bytes)"
	}
	return bytes + " bytes"
}
