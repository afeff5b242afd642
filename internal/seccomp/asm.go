package seccomp

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// asm builds a classic BPF program with symbolic forward jumps. A jump target
// is a label name; the empty name means the next instruction. finish resolves
// the labels and fails if a conditional jump would need more than the 255
// instructions its 8-bit offset can skip, or if a label is missing or behind
// the jump (classic BPF only jumps forward).
type asm struct {
	insns  []bpf.Instruction
	jumps  []pendingJump
	labels map[string]int
	err    error // first label error, reported by finish
}

// pendingJump is a JumpIf at insns[at] whose targets are still labels.
type pendingJump struct {
	at              int
	ifTrue, ifFalse string
}

func (a *asm) emit(ins bpf.Instruction) { a.insns = append(a.insns, ins) }

// load loads the 32-bit word of seccomp_data at off into A.
func (a *asm) load(off uint32) { a.emit(bpf.LoadAbsolute{Off: off, Size: 4}) }

// and masks A with v.
func (a *asm) and(v uint32) { a.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: v}) }

// ret returns v from the filter.
func (a *asm) ret(v uint32) { a.emit(bpf.RetConstant{Val: v}) }

// jump goes to ifTrue if "A cond v" holds and to ifFalse otherwise.
func (a *asm) jump(cond bpf.JumpTest, v uint32, ifTrue, ifFalse string) {
	a.jumps = append(a.jumps, pendingJump{at: len(a.insns), ifTrue: ifTrue, ifFalse: ifFalse})
	a.emit(bpf.JumpIf{Cond: cond, Val: v})
}

// label names the next instruction. A name may be defined once.
func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	if _, dup := a.labels[name]; (dup || name == "") && a.err == nil {
		a.err = fmt.Errorf("seccomp: program: label %q: defined twice or empty", name)
	}
	a.labels[name] = len(a.insns)
}

// finish resolves every jump and returns the program.
func (a *asm) finish() ([]bpf.Instruction, error) {
	if a.err != nil {
		return nil, a.err
	}
	for _, j := range a.jumps {
		t, err := a.skip(j.at, j.ifTrue)
		if err != nil {
			return nil, err
		}
		f, err := a.skip(j.at, j.ifFalse)
		if err != nil {
			return nil, err
		}
		ins := a.insns[j.at].(bpf.JumpIf)
		ins.SkipTrue, ins.SkipFalse = t, f
		a.insns[j.at] = ins
	}
	return a.insns, nil
}

// skip returns the offset from the jump at index at to label name.
func (a *asm) skip(at int, name string) (uint8, error) {
	if name == "" {
		return 0, nil
	}
	to, ok := a.labels[name]
	if !ok {
		return 0, fmt.Errorf("seccomp: program: label %q: not defined", name)
	}
	n := to - at - 1
	if n < 0 || n > 255 || to >= len(a.insns) {
		return 0, fmt.Errorf("seccomp: program: jump from instruction %d to label %q: offset %d outside 0..255 or past the end", at, name, n)
	}
	return uint8(n), nil
}
