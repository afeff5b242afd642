package seccomp

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// passExecPrefix returns the instructions to put before a program of arch
// so that one execve, whose pathname argument is the pointer path (all 64
// bits compared), goes through without reaching the program: the
// supervisor's own start of a command, whose parent waits in vfork and
// could not let the supervisor run (see the Linux backend's
// forkCommand). Every other call, and every other execve, goes on to the
// program. Nothing is gained by forging the pointer: the program only
// observes execve (Options.SuperviseExec), it never refuses it.
func passExecPrefix(arch Arch, path uint64) ([]bpf.Instruction, error) {
	t, err := arch.table()
	if err != nil {
		return nil, err
	}
	nr, ok := t.nr["execve"]
	if !ok {
		return nil, fmt.Errorf("seccomp: arch %s: no syscall number for execve", arch)
	}
	// Each test skips, when it fails, to the program after the prefix.
	const n = 9
	skipTo := func(i int) uint8 { return uint8(n - i - 1) }
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: t.audit, SkipFalse: skipTo(1)},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: skipTo(3)},
		bpf.LoadAbsolute{Off: argLow(0), Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(path), SkipFalse: skipTo(5)},
		bpf.LoadAbsolute{Off: argHigh(0), Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(path >> 32), SkipFalse: skipTo(7)},
		bpf.RetConstant{Val: retAllow},
	}, nil
}
