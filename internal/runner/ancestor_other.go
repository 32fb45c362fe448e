//go:build !linux

package runner

import "time"

// isAncestor cannot read the process tree cheaply here; the server's check
// (the node exists and belongs to the session named) still decides.
func isAncestor(pid int) bool { return true }

// startedAfter cannot read a process's start time here: a record naming
// an ancestor's pid is taken to be that ancestor's.
func startedAfter(pid int, t time.Time) bool { return false }

// ancestryKnown says whether isAncestor reads the process tree; here it
// cannot, so nothing is concluded from a pid alone (selfwait.go).
const ancestryKnown = false

// zklockAncestor cannot read the process tree here.
func zklockAncestor() bool { return false }
