#include "textflag.h"

// func rawVfork(flags uintptr) (pid uintptr, errno uintptr)
//
// clone(flags) for a child that shares the caller's memory and stack
// (CLONE_VM|CLONE_VFORK). The return address stays in the link register.
TEXT ·rawVfork(SB),NOSPLIT|NOFRAME,$0-24
	MOVD	flags+0(FP), R0
	MOVD	$0, R1
	MOVD	$0, R2
	MOVD	$0, R3
	MOVD	$0, R4
	MOVD	$0, R5
	MOVD	$220, R8 // SYS_CLONE
	SVC
	CMN	$4095, R0
	BCC	ok
	MOVD	$-1, R4
	MOVD	R4, pid+8(FP)
	NEG	R0, R0
	MOVD	R0, errno+16(FP)
	RET
ok:
	MOVD	R0, pid+8(FP)
	MOVD	ZR, errno+16(FP)
	RET
