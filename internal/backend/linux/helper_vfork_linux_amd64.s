#include "textflag.h"

// func rawVfork(flags uintptr) (pid uintptr, errno uintptr)
//
// clone(flags) for a child that shares the caller's memory and stack
// (CLONE_VM|CLONE_VFORK): the return address is kept in a register across
// the call, as syscall's rawVforkSyscall does, since the child's calls
// overwrite the stack slot that held it.
TEXT ·rawVfork(SB),NOSPLIT|NOFRAME,$0-24
	MOVQ	flags+0(FP), DI
	MOVQ	$0, SI
	MOVQ	$0, DX
	MOVQ	$0, R10
	MOVQ	$0, R8
	MOVQ	$0, R9
	MOVQ	$56, AX // SYS_CLONE
	POPQ	R12 // preserve return address
	SYSCALL
	PUSHQ	R12
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$-1, pid+8(FP)
	NEGQ	AX
	MOVQ	AX, errno+16(FP)
	RET
ok:
	MOVQ	AX, pid+8(FP)
	MOVQ	$0, errno+16(FP)
	RET
