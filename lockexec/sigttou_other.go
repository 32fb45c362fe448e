//go:build unix && !linux

package lockexec

import (
	"os/signal"
	"sync"
	"syscall"
)

var ttouMu sync.Mutex

// withoutSIGTTOU runs f with SIGTTOU ignored. Without a portable
// per-thread signal mask in golang.org/x/sys/unix, the disposition is
// changed process-wide for the duration of f and reset afterwards.
func withoutSIGTTOU(f func()) {
	ttouMu.Lock()
	defer ttouMu.Unlock()
	if signal.Ignored(syscall.SIGTTOU) {
		f()
		return
	}
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	f()
}
