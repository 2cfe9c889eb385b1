#include "textflag.h"

// func rawVfork(flags uintptr) (pid uintptr, errno uintptr)
//
// clone(2) with flags and no new stack. With CLONE_VM|CLONE_VFORK the
// child runs on this very stack while the parent thread sleeps until the
// child execs or exits, so the return address is kept in a register (R12,
// which each thread has its own copy of) across the system call, not in
// the stack slot the child will overwrite; each side pushes it back before
// returning. NOFRAME: no frame of ours for the child to corrupt.
TEXT ·rawVfork(SB),NOSPLIT|NOFRAME,$0-24
	MOVQ	flags+0(FP), DI
	MOVQ	$0, SI		// the same stack
	MOVQ	$0, DX		// no parent_tid
	MOVQ	$0, R10		// no child_tid
	MOVQ	$0, R8		// no tls
	MOVQ	$0, R9
	MOVQ	$56, AX		// SYS_clone
	POPQ	R12
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
