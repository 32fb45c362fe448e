package lockexec

// procState returns the state letter from /proc/PID/stat, 0 if gone.
func procState(pid int) byte {
	p, _ := readProcStat(pid)
	return p.state
}

// groupStopped reports whether the process group pgid is stopped: none of
// its processes can run until continued. dash vforks each command, and a
// stop that lands between a child's vfork and its exec stops the child
// while the shell waits for it in state D (uninterruptible) for as long
// as the child stays stopped; such a shell cannot run either. A zombie
// (a sleep that exited as the stop landed, which its stopped shell
// cannot reap) runs nothing either, and stays one until the group is
// continued: counting it as running would wait forever.
func groupStopped(pgid int) bool {
	procs, ok := allProcs()
	if !ok {
		return false
	}
	stopped := false
	for _, p := range procs {
		if p.pgrp != pgid {
			continue
		}
		switch p.state {
		case 'T':
			stopped = true
		case 'D', 'Z', 'X':
		default:
			return false
		}
	}
	return stopped
}
