#include "textflag.h"

// The in-memory watchdog's start and its whole life; see thinwatch_linux_amd64.go
// for what it does and why it is written here. Offsets are thinBlock's
// fields (thinwatch_linux_amd64.go; a test checks that they agree).

#define B_PGID 0
#define B_STOP 8
#define B_KILL 16
#define B_DONE 24
#define B_FIRED 32
#define B_RFD 40
#define B_STOPPED 48
#define B_KILLED 56
#define B_NAME 64
#define B_TS 80
#define B_POLLFD 96
#define B_ALLMASK 104
#define B_OLDMASK 112
#define B_WPID 120
#define B_UNMAP 128
#define B_BUF 176
#define B_READYFD 240
#define STACK_TOP 4096

#define SYS_read 0
#define SYS_write 1
#define SYS_close 3
#define SYS_poll 7
#define SYS_munmap 11
#define SYS_rt_sigprocmask 14
#define SYS_clone 56
#define SYS_exit 60
#define SYS_kill 62
#define SYS_setsid 112
#define SYS_prctl 157
#define SYS_clock_gettime 228
#define SYS_exit_group 231
#define SYS_dup3 292
#define SYS_close_range 436

// CLONE clones this process with flags, the child on the block's page
// (in R12) for a stack; the child's pid, 0 in the child, or -errno in AX.
#define CLONE(flags) \
	MOVQ	$SYS_clone, AX; \
	MOVQ	$flags, DI; \
	LEAQ	STACK_TOP(R12), SI; \
	MOVQ	$0, DX; \
	MOVQ	$0, R10; \
	MOVQ	$0, R8; \
	SYSCALL

// KILLGROUP sends sig to the process group in R9.
#define KILLGROUP(sig) \
	MOVQ	R9, DI; \
	NEGQ	DI; \
	MOVQ	$sig, SI; \
	MOVQ	$SYS_kill, AX; \
	SYSCALL

// func thinCode() uintptr
TEXT ·thinCode(SB), NOSPLIT, $0-8
	LEAQ	·thinClone(SB), AX
	MOVQ	AX, ret+0(FP)
	RET

// func thinClone(blk uintptr) (pid int64, errno int64)
//
// Two clones. The first shares zklock's memory and suspends zklock's thread
// until it exits (CLONE_VM|CLONE_VFORK, as Go's own fork and exec does); it
// forks the watchdog as zklock's child (CLONE_PARENT), notes its pid in the
// block and exits. The watchdog gets a copy of the address space from a
// process that shares zklock's memory, so the kernel gives it no restartable
// sequence area of a C library's (a clone with CLONE_VM starts without
// one, and a fork inherits that): with one, its address would be unmapped
// below and the kernel's next update of it would fault.
TEXT ·thinClone(SB), NOSPLIT, $0-24
	MOVQ	blk+0(FP), R12
	// Every signal blocked on this thread across the clone: the child
	// starts with that mask and keeps it, so that no handler of the Go
	// runtime's (which the child's copy of the table still names) ever
	// runs in it.
	MOVQ	$SYS_rt_sigprocmask, AX
	MOVQ	$2, DI // SIG_SETMASK
	LEAQ	B_ALLMASK(R12), SI
	LEAQ	B_OLDMASK(R12), DX
	MOVQ	$8, R10
	SYSCALL
	CLONE(0x4111) // CLONE_VM|CLONE_VFORK|SIGCHLD
	CMPQ	AX, $0
	JEQ	forker
	MOVQ	AX, R13
	MOVQ	$SYS_rt_sigprocmask, AX
	MOVQ	$2, DI
	LEAQ	B_OLDMASK(R12), SI
	MOVQ	$0, DX
	MOVQ	$8, R10
	SYSCALL
	CMPQ	R13, $-4095
	JCS	started
	NEGQ	R13
	MOVQ	$-1, pid+8(FP)
	MOVQ	R13, errno+16(FP)
	RET
started:
	MOVQ	R13, pid+8(FP)
	MOVQ	$0, errno+16(FP)
	RET

forker:
	// In zklock's memory, on the block's page, zklock's thread suspended.
	CLONE(0x8011) // CLONE_PARENT|SIGCHLD
	CMPQ	AX, $0
	JEQ	child
	MOVQ	AX, B_WPID(R12) // the watchdog's pid, or -errno
	MOVQ	$SYS_exit, AX
	MOVQ	$0, DI
	SYSCALL

child:
	// From here on no Go code runs: only system calls, with the block in
	// R12 and nothing on the stack.
	MOVQ	$SYS_setsid, AX
	SYSCALL
	MOVQ	$SYS_prctl, AX
	MOVQ	$15, DI // PR_SET_NAME
	LEAQ	B_NAME(R12), SI
	MOVQ	$0, DX
	MOVQ	$0, R10
	MOVQ	$0, R8
	SYSCALL
	// The pipe's read end becomes standard input, the ready pipe's write
	// end standard output (both are above 2 in the copied table, see
	// startThin); every other descriptor goes, the instruction pipe's
	// write end above all, so that zklock's death is that pipe's end.
	MOVQ	$SYS_dup3, AX
	MOVQ	B_RFD(R12), DI
	MOVQ	$0, SI
	MOVQ	$0, DX
	SYSCALL
	MOVQ	$SYS_dup3, AX
	MOVQ	B_READYFD(R12), DI
	MOVQ	$1, SI
	MOVQ	$0, DX
	SYSCALL
	MOVQ	$SYS_close_range, AX
	MOVQ	$2, DI
	MOVL	$0xffffffff, SI
	MOVQ	$0, DX
	SYSCALL
	// The address space to give up: all but this page and the code's.
	LEAQ	B_UNMAP(R12), R13
	MOVQ	$3, BX
unmap:
	MOVQ	8(R13), SI
	CMPQ	SI, $0
	JEQ	unmapped
	MOVQ	$SYS_munmap, AX
	MOVQ	0(R13), DI
	SYSCALL
unmapped:
	ADDQ	$16, R13
	DECQ	BX
	JNZ	unmap
	// Ready: a byte, then the end of the ready pipe. A watchdog that died
	// in what comes before (where something in the process, an emulator
	// say, did not survive the unmapping) gives zklock the end alone.
	MOVQ	$SYS_write, AX
	MOVQ	$1, DI
	LEAQ	B_NAME(R12), SI
	MOVQ	$1, DX
	SYSCALL
	MOVQ	$SYS_close, AX
	MOVQ	$1, DI
	SYSCALL

loop:
	CMPQ	B_DONE(R12), $0
	JNE	exit
	MOVQ	$SYS_clock_gettime, AX
	MOVQ	$7, DI // CLOCK_BOOTTIME
	LEAQ	B_TS(R12), SI
	SYSCALL
	MOVQ	B_TS(R12), R13
	IMULQ	$1000000000, R13
	ADDQ	B_TS+8(R12), R13 // R13: now
	MOVQ	$1000000000, BX  // BX: the nap, at most a second
	MOVQ	B_PGID(R12), R9
	CMPQ	R9, $0
	JLE	nap
	CMPQ	B_STOPPED(R12), $0
	JNE	checkkill
	MOVQ	B_STOP(R12), R8
	CMPQ	R8, $0
	JLE	checkkill
	CMPQ	R13, R8
	JLT	stopnap
	MOVQ	$1, B_STOPPED(R12)
	KILLGROUP(15)
	// A stopped group (Ctrl-Z) keeps SIGTERM pending until continued.
	KILLGROUP(18)
	ADDQ	$1, B_FIRED(R12)
	JMP	checkkill
stopnap:
	SUBQ	R13, R8
	CMPQ	R8, BX
	JGE	checkkill
	MOVQ	R8, BX
checkkill:
	CMPQ	B_KILLED(R12), $0
	JNE	nap
	MOVQ	B_KILL(R12), R8
	CMPQ	R8, $0
	JLE	nap
	CMPQ	R13, R8
	JLT	killnap
	MOVQ	$1, B_KILLED(R12)
	KILLGROUP(9)
	ADDQ	$1, B_FIRED(R12)
	JMP	nap
killnap:
	SUBQ	R13, R8
	CMPQ	R8, BX
	JGE	nap
	MOVQ	R8, BX
nap:
	// Milliseconds, rounded up: a deadline is never acted on early.
	MOVQ	BX, AX
	ADDQ	$999999, AX
	MOVQ	$0, DX
	MOVQ	$1000000, CX
	DIVQ	CX
	MOVQ	AX, DX
	MOVQ	$SYS_poll, AX
	LEAQ	B_POLLFD(R12), DI
	MOVQ	$1, SI
	SYSCALL
	CMPQ	AX, $0
	JEQ	loop
	JGT	readable
	CMPQ	AX, $-4 // EINTR
	JEQ	loop
	JMP	gone
readable:
	MOVQ	$SYS_read, AX
	MOVQ	$0, DI
	LEAQ	B_BUF(R12), SI
	MOVQ	$64, DX
	SYSCALL
	CMPQ	AX, $0
	JGT	loop
	CMPQ	AX, $-4 // EINTR
	JEQ	loop
	CMPQ	AX, $-11 // EAGAIN
	JEQ	loop
gone:
	// The pipe's end: zklock is gone. Unless it said it was done, the
	// command goes with it.
	CMPQ	B_DONE(R12), $0
	JNE	exit
	MOVQ	B_PGID(R12), R9
	CMPQ	R9, $0
	JLE	exit
	KILLGROUP(9)
exit:
	MOVQ	$SYS_exit_group, AX
	MOVQ	$0, DI
	SYSCALL
	JMP	exit
