package zktest

import (
	"bytes"
	"os"
	"strconv"
)

// ProcessAlive reports whether pid is a live process: it has a /proc entry
// and is not a zombie. A zombie has done all it will do; whether it is
// reaped is its parent's business (and this machine's init may never reap
// orphans), so tests that prove "no child left running" count it as gone.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z'
}
