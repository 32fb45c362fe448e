//go:build unix && !linux

package deadman

import "golang.org/x/sys/unix"

// lockThread: elsewhere the niceness belongs to the process.
func lockThread() {}

// raise puts the watchdog ahead of the command where it is permitted
// (root): see priority_linux.go. Darwin has no real-time policy that a
// process may ask for this way, nor mlockall, so the niceness is all.
func raise() { nicer() }

// niceness is the process's; -1 is a niceness as well as the error return,
// which errno alone tells apart, and a refusal here only costs a raise.
func niceness() (int, bool) {
	n, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	return n, err == nil
}
