package lockexec

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// withoutSIGTTOU runs f with SIGTTOU blocked on the current OS thread. A
// blocked SIGTTOU counts as ignored for the terminal's job-control checks,
// and blocking it on one locked thread (rather than ignoring it
// process-wide) leaves the caller's signal handling untouched and is not
// inherited by anything.
func withoutSIGTTOU(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	const bits = int(unsafe.Sizeof(set.Val[0]) * 8)
	n := int(unix.SIGTTOU) - 1
	set.Val[n/bits] |= 1 << (n % bits)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		f()
		return
	}
	defer func() { _ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil) }()
	f()
}
