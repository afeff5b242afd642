package windows

import (
	"math"

	"github.com/moat-sandbox/moat/internal/spec"
)

// The job-object values the backend sets, with the Windows SDK's values
// (this file builds on every OS, so it does not take them from
// golang.org/x/sys/windows).
const (
	limitProcessTime     = 0x00000002 // JOB_OBJECT_LIMIT_PROCESS_TIME
	limitActiveProcess   = 0x00000008 // JOB_OBJECT_LIMIT_ACTIVE_PROCESS
	limitPriorityClass   = 0x00000020 // JOB_OBJECT_LIMIT_PRIORITY_CLASS
	limitProcessMemory   = 0x00000100 // JOB_OBJECT_LIMIT_PROCESS_MEMORY
	limitJobMemory       = 0x00000200 // JOB_OBJECT_LIMIT_JOB_MEMORY
	limitDieOnException  = 0x00000400 // JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
	limitKillOnJobClose  = 0x00002000 // JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	priorityBelowNormal  = 0x00004000 // BELOW_NORMAL_PRIORITY_CLASS
	priorityIdle         = 0x00000040 // IDLE_PRIORITY_CLASS
	uiLimitAll           = 0x000000ff // every JOB_OBJECT_UILIMIT_* flag
	ticksPerSecond       = 10_000_000 // job times are in 100 ns units
	maxActiveProcesses   = math.MaxUint32
	maxUserTimeInSeconds = math.MaxInt64 / ticksPerSecond
)

// JobLimits are the limits of a sandbox's job object
// (JOBOBJECT_EXTENDED_LIMIT_INFORMATION). The zero value limits nothing
// and does not even kill the job's processes when it is closed, which the
// backend never uses: Limits always sets KillOnJobClose.
type JobLimits struct {
	// Flags are the JOB_OBJECT_LIMIT_* flags.
	Flags uint32
	// JobMemory bounds the committed memory of all the job's processes
	// together, and ProcessMemory that of each, in bytes.
	JobMemory, ProcessMemory uint64
	// ActiveProcesses bounds how many processes the job holds at once.
	ActiveProcesses uint32
	// PerProcessUserTime bounds each process's user-mode CPU time, in
	// 100 ns units; past it Windows ends the process.
	PerProcessUserTime int64
	// PriorityClass is the priority class of every process of the job.
	PriorityClass uint32
	// UIRestrictions are the JOB_OBJECT_UILIMIT_* flags.
	UIRestrictions uint32
}

// Limits is the job object for l and nice: kill on close, no process
// outliving the job through an unhandled-exception dialog, every UI
// restriction (desktops, global atoms, other processes' windows, the
// clipboard, system parameters, display settings, logging off), and each
// limit that l sets (zero or negative: none). The memory limit is for
// the whole tree and for each process, as on Linux; CPU time is per
// process, like RLIMIT_CPU, and counts user time only.
func Limits(l spec.Limits, nice int) JobLimits {
	j := JobLimits{Flags: limitKillOnJobClose | limitDieOnException, UIRestrictions: uiLimitAll}
	if l.MemoryBytes > 0 {
		j.Flags |= limitJobMemory | limitProcessMemory
		j.JobMemory, j.ProcessMemory = uint64(l.MemoryBytes), uint64(l.MemoryBytes)
	}
	if l.Processes > 0 {
		j.Flags |= limitActiveProcess
		j.ActiveProcesses = uint32(min(l.Processes, maxActiveProcesses))
	}
	if l.CPUSeconds > 0 {
		j.Flags |= limitProcessTime
		j.PerProcessUserTime = min(l.CPUSeconds, maxUserTimeInSeconds) * ticksPerSecond
	}
	if pc := PriorityClass(nice); pc != 0 {
		j.Flags |= limitPriorityClass
		j.PriorityClass = pc
	}
	return j
}

// PriorityClass is the class that nice lowers a sandbox to, against the
// normal class that Windows defines the others by: 0 (unchanged) for 0,
// below normal for 1 through 9, idle for 10 through 19.
func PriorityClass(nice int) uint32 {
	switch {
	case nice <= 0:
		return 0
	case nice < 10:
		return priorityBelowNormal
	}
	return priorityIdle
}
