package runner

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// ancestryKnown says whether isAncestor reads the process tree.
const ancestryKnown = true

// maxAncestry bounds the walk up the process tree; a real chain is short.
const maxAncestry = 1024

// isAncestor reports whether pid is an ancestor of this process, walking up
// the parent chain through /proc. A copied environment (an operator pasting
// another job's variables into a shell, a saved cron environment) then
// names a zklock that is not ours, and takes the normal path.
func isAncestor(pid int) bool {
	p := os.Getppid()
	for i := 0; i < maxAncestry && p > 1; i++ {
		if p == pid {
			return true
		}
		next, ok := parentOf(p)
		if !ok {
			return false
		}
		p = next
	}
	return p == pid
}

// parentOf reads a process's parent from /proc/PID/stat. The command name
// in parentheses may hold spaces and ")": the fields after the last ")"
// are fixed, state then ppid.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}

// userHZ is the unit of the start times in /proc/PID/stat: the kernel
// reports them in USER_HZ, 100 on every architecture Linux runs on.
const userHZ = 100

// startedAfter reports whether process pid started after t (this host's
// clock, with a second to spare for the clock's and the record's
// rounding): a zklock record naming pid that was written before the process
// named pid started belongs to an earlier process with the same pid. An
// unreadable process counts as not started after.
func startedAfter(pid int, t time.Time) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	// After the ")": state is field 3, starttime field 22.
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return false
	}
	ticks, err := strconv.ParseInt(string(f[19]), 10, 64)
	boot, ok := bootTime()
	if err != nil || !ok {
		return false
	}
	started := boot.Add(time.Duration(ticks) * time.Second / userHZ)
	return started.After(t.Add(time.Second))
}

// bootTime reads when this host booted, from /proc/stat's btime.
func bootTime() (time.Time, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("btime ")); ok {
			s, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return time.Unix(s, 0), err == nil
		}
	}
	return time.Time{}, false
}

// zklockAncestor reports whether an ancestor of this process runs zklock:
// the same executable as this one, or a program named zklock.
func zklockAncestor() bool {
	self, _ := os.Readlink("/proc/self/exe")
	p := os.Getppid()
	for i := 0; i < maxAncestry && p > 1; i++ {
		dir := "/proc/" + strconv.Itoa(p)
		if exe, err := os.Readlink(dir + "/exe"); err == nil && self != "" && exe == self {
			return true
		}
		if comm, err := os.ReadFile(dir + "/comm"); err == nil && bytes.HasPrefix(comm, []byte("zklock")) {
			return true
		}
		next, ok := parentOf(p)
		if !ok {
			return false
		}
		p = next
	}
	return false
}
