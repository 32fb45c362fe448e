package lockexec

// procAlive reports whether pid is a running (or stopped) process. A
// zombie counts as dead: this machine's init may never reap orphans.
func procAlive(pid int) bool {
	p, ok := readProcStat(pid)
	return ok && !p.dead()
}

// procState returns the state letter from /proc/PID/stat, 0 if gone.
func procState(pid int) byte {
	p, _ := readProcStat(pid)
	return p.state
}
