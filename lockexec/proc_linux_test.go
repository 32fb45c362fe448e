package lockexec

// procState returns the state letter from /proc/PID/stat, 0 if gone.
func procState(pid int) byte {
	p, _ := readProcStat(pid)
	return p.state
}
