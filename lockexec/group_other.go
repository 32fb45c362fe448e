//go:build unix && !linux

package lockexec

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// groupAlive reports whether process group pgid still has members. Without
// /proc, zombies count too; init reaps orphans promptly on these systems.
func groupAlive(pgid int) bool {
	return unix.Kill(-pgid, 0) != syscall.ESRCH
}

// memberHasOutsideParent would need a process table walk; answering false
// makes pgrpOrphaned assume the worst when the quick parent check fails.
func memberHasOutsideParent(pgrp, sid int) bool { return false }
