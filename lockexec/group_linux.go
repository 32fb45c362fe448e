package lockexec

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// procInfo is the part of /proc/PID/stat that group bookkeeping needs.
type procInfo struct {
	pid, ppid, pgrp, sid int
	state                byte
}

// readProcStat parses /proc/PID/stat. The command name is in parentheses
// and may itself contain spaces and parentheses, so fields are counted from
// the last ')'.
func readProcStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, state: f[0][0]}
	var errs [3]error
	p.ppid, errs[0] = strconv.Atoi(string(f[1]))
	p.pgrp, errs[1] = strconv.Atoi(string(f[2]))
	p.sid, errs[2] = strconv.Atoi(string(f[3]))
	for _, err := range errs {
		if err != nil {
			return procInfo{}, false
		}
	}
	return p, true
}

// allProcs lists every process in /proc; ok is false if /proc is unusable.
func allProcs() (procs []procInfo, ok bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, false
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readProcStat(pid); ok {
			procs = append(procs, p)
		}
	}
	return procs, true
}

// dead reports whether a process has finished running: a zombie waiting
// for its parent (or, in a container whose init does not reap, forever).
func (p procInfo) dead() bool { return p.state == 'Z' || p.state == 'X' }

// groupAlive reports whether any live process remains in process group
// pgid. kill(-pgid, 0) alone also counts zombies, and orphaned zombies
// linger in containers whose init never reaps them, which would make every
// termination wait out its full grace period.
func groupAlive(pgid int) bool {
	if err := unix.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	procs, ok := allProcs()
	if !ok {
		return true // kill says something is there
	}
	for _, p := range procs {
		if p.pgrp == pgid && !p.dead() {
			return true
		}
	}
	return false
}

// memberHasOutsideParent reports whether some process of group pgrp has a
// parent in another group of session sid (POSIX's "not orphaned").
func memberHasOutsideParent(pgrp, sid int) bool {
	procs, ok := allProcs()
	if !ok {
		return false
	}
	byPid := make(map[int]procInfo, len(procs))
	for _, p := range procs {
		byPid[p.pid] = p
	}
	for _, p := range procs {
		if p.pgrp != pgrp || p.dead() {
			continue
		}
		if parent, ok := byPid[p.ppid]; ok && parent.pgrp != pgrp && parent.sid == sid {
			return true
		}
	}
	return false
}
