package deadman

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// lockThread keeps the loop on one OS thread: on Linux a scheduling
// policy and a niceness belong to a thread, and raise sets them on this
// one.
func lockThread() { runtime.LockOSThread() }

// rtPriority is the real-time priority the loop asks for: the lowest, which
// is still above every process of the ordinary policy, the command's
// included, and below anything an administrator made real-time on purpose.
const rtPriority = 1

// raise puts the watchdog ahead of the command and of whatever starves the
// machine, where it is permitted (root, CAP_SYS_NICE, or an RLIMIT_RTPRIO
// or RLIMIT_NICE that allows it); otherwise it changes nothing. A deadline
// is only worth what the process enforcing it gets of the CPU: with the
// ordinary policy, a watchdog shares the CPU with the hogs that starve
// zklock, and its kill lands late by as much. SCHED_RR runs it before every
// process of the ordinary policy as soon as its poll wakes. The flag
// SCHED_RESET_ON_FORK keeps the policy from passing to any child (the
// watchdog starts none, but the policy must never reach a command). Where
// SCHED_RR is refused, a niceness of -10 is the next best.
//
// Its memory is locked too, so that the loop does not wait for its pages
// to come back from swap in the moment it must act: under memory pressure
// that wait is the longest of all. MCL_ONFAULT locks each page once it has
// been touched instead of loading the whole binary at once; the loop has
// touched what it runs by the first deadline, since the same code paths
// (poll, read, the clock) run on every wake-up.
func raise() {
	_ = unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT)
	if attr, err := unix.SchedGetAttr(0, 0); err == nil && (attr.Policy == unix.SCHED_FIFO || attr.Policy == unix.SCHED_RR) {
		return // real-time already, as the administrator chose
	}
	err := unix.SchedSetAttr(0, &unix.SchedAttr{
		Size:     unix.SizeofSchedAttr,
		Policy:   unix.SCHED_RR,
		Flags:    unix.SCHED_FLAG_RESET_ON_FORK,
		Priority: rtPriority,
	}, 0)
	if err != nil {
		nicer()
	}
}

// niceness is the calling thread's. Linux's getpriority(2), as a system
// call, returns 20 - nice, so that it is never negative.
func niceness() (int, bool) {
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	return 20 - raw, err == nil
}
