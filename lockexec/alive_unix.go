//go:build unix

package lockexec

// GroupAlive reports whether a process of group pgid is still running.
// Zombies do not count: they can do nothing more. zklock's runner asks it
// once the session could have expired, to prove a kill that came late.
func GroupAlive(pgid int) bool { return groupAlive(pgid) }
