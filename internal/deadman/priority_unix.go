//go:build unix

package deadman

import "golang.org/x/sys/unix"

// watchdogNice is the niceness the watchdog asks for where it cannot be
// real-time: ahead of every process at the default niceness, the command's
// included.
const watchdogNice = -10

// nicer lowers the niceness of the calling thread (Linux) or process
// (elsewhere) to watchdogNice, where it is permitted and not lower already.
func nicer() {
	if n, ok := niceness(); ok && n <= watchdogNice {
		return
	}
	_ = unix.Setpriority(unix.PRIO_PROCESS, 0, watchdogNice)
}
