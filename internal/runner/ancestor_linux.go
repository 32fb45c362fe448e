package runner

import (
	"bytes"
	"os"
	"strconv"
)

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
