package owner

import (
	"os"
	"runtime"
	"sync"
)

// PIDNamespace is the PID namespace this process's pids belong to, as
// Owner.PIDNS records it; "" where the system has none or does not say.
var PIDNamespace = sync.OnceValue(func() string {
	if runtime.GOOS != "linux" {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return ns
})

// SamePIDNamespace reports whether o's pid may name a process here: its
// namespace is this process's, or either is unknown (an older zklock's
// record, a system without namespaces), where the pid is taken as it is.
func (o Owner) SamePIDNamespace() bool {
	here := PIDNamespace()
	return o.PIDNS == "" || here == "" || o.PIDNS == here
}
