//go:build unix && !linux

package lockexec

import "syscall"

// procAlive reports whether pid exists. Without /proc zombies count too;
// init reaps orphans promptly on these systems.
func procAlive(pid int) bool { return syscall.Kill(pid, 0) != syscall.ESRCH }
