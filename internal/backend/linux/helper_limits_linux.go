package linux

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// applyRlimits sets each limit, soft and hard, on the helper; the command
// inherits them. RLIMIT_CORE is always 0 so a crash cannot dump memory.
func applyRlimits(limits []rlimit) error {
	all := append([]rlimit{{Resource: unix.RLIMIT_CORE, Value: 0}}, limits...)
	for _, l := range all {
		v := &unix.Rlimit{Cur: l.Value, Max: max(l.Value, l.Hard)}
		if err := unix.Setrlimit(l.Resource, v); err != nil {
			return fmt.Errorf("setrlimit %s: %w", rlimitName(l.Resource), err)
		}
	}
	return nil
}

// checkRlimits makes sure each command can be given its limits: a limit
// above the zygote's own hard limit raises that hard limit first (which
// only a privileged zygote may; the command's child, without
// capabilities, can then lower to it), and fails as setrlimit would
// otherwise.
func checkRlimits(limits []rlimit) error {
	for _, l := range limits {
		var cur unix.Rlimit
		if err := unix.Getrlimit(l.Resource, &cur); err != nil {
			return fmt.Errorf("getrlimit %s: %w", rlimitName(l.Resource), err)
		}
		want := max(l.Value, l.Hard)
		if want <= cur.Max {
			continue
		}
		if err := unix.Setrlimit(l.Resource, &unix.Rlimit{Cur: min(cur.Cur, want), Max: want}); err != nil {
			return fmt.Errorf("setrlimit %s: %w", rlimitName(l.Resource), err)
		}
	}
	return nil
}

func rlimitName(r int) string {
	switch r {
	case unix.RLIMIT_CORE:
		return "core"
	case unix.RLIMIT_DATA:
		return "data"
	case unix.RLIMIT_AS:
		return "as"
	case unix.RLIMIT_CPU:
		return "cpu"
	case unix.RLIMIT_FSIZE:
		return "fsize"
	case unix.RLIMIT_NPROC:
		return "nproc"
	case unix.RLIMIT_NOFILE:
		return "nofile"
	}
	return fmt.Sprint(r)
}

// I/O priority classes and the ioprio_set "who" for a single thread.
const (
	ioprioClassBE    = 2
	ioprioClassIdle  = 3
	ioprioClassShift = 13
	ioprioWhoProcess = 1
)

// applyPriority lowers the CPU and I/O priority of the calling thread, which
// the command inherits. nice is 0..19 and only ever lowers priority; io is 0
// (unchanged), 1 (lowest best-effort level) or 2 (idle class).
func applyPriority(nice, io int) error {
	if nice > 0 {
		cur, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
		if err != nil {
			return fmt.Errorf("getpriority: %w", err)
		}
		// The raw syscall returns 20-nice.
		target := min(20-cur+nice, 19)
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, target); err != nil {
			return fmt.Errorf("setpriority: %w", err)
		}
	}
	var prio int
	switch io {
	case 1:
		prio = ioprioClassBE<<ioprioClassShift | 7
	case 2:
		prio = ioprioClassIdle << ioprioClassShift
	default:
		return nil
	}
	if _, _, e := unix.RawSyscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, 0, uintptr(prio)); e != 0 {
		return fmt.Errorf("ioprio_set: %w", e)
	}
	return nil
}
