//go:build unix

package lockexec

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Forwarded are the signals a supervisor relays to the command's process
// group: the ones a user, a terminal or a service manager sends to ask a
// job to stop or to act. The caller catches the same set while it waits for
// the lock, so that each one means the same thing before and after the
// command starts.
var Forwarded = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP,
	syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// SignalName is the conventional name of sig, such as "SIGTERM", for
// messages; Go's own String gives prose ("terminated").
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return sig.String()
}
