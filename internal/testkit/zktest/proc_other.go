//go:build unix && !linux

package zktest

import "syscall"

// ProcessAlive reports whether pid exists. Without /proc a zombie counts as
// alive; these systems' init reaps orphans promptly.
func ProcessAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH
}
