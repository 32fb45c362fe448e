package runner

import "syscall"

// argLimits are Linux's limits on a new program's arguments and
// environment (fs/exec.c): each string at most MAX_ARG_STRLEN (32 pages)
// with its NUL; all strings and their pointers together at most a quarter
// of the stack's soft limit, capped at 6 MiB (3/4 of _STK_LIM) and never
// below ARG_MAX (32 pages).
func argLimits() (perVar, total int) {
	const page = 4096
	perVar = 32 * page
	total = 6 << 20
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err == nil && rl.Cur != ^uint64(0) && rl.Cur/4 < uint64(total) {
		total = int(rl.Cur / 4)
	}
	return perVar, max(total, 32*page)
}
