package runner

import (
	"time"

	"github.com/zklock/zklock/internal/recipe"
)

// WaitLimit is how long Run waits for its locks: not at all (NoWait, tryrun), at
// most a timeout (WaitAtMost, run --timeout), or until they are held or a
// signal ends the wait (WaitForever).
type WaitLimit struct {
	try     bool
	timeout time.Duration // with bounded: the timeout
	bounded bool
}

var (
	// NoWait runs only if every lock is free now.
	NoWait = WaitLimit{try: true}
	// WaitForever waits until the locks are held.
	WaitForever = WaitLimit{}
)

// WaitAtMost waits for at most d; a d of zero or less does not wait at all.
func WaitAtMost(d time.Duration) WaitLimit {
	if d <= 0 {
		return NoWait
	}
	return WaitLimit{timeout: d, bounded: true}
}

// Timeout returns the timeout, if the wait has one.
func (w WaitLimit) Timeout() (time.Duration, bool) { return w.timeout, w.bounded }

// start turns the wait into the lock package's terms once zklock has a
// session and is about to join the queue: the timeout counts from there,
// not from before connecting. The one deadline covers every path and every
// rejoin after a lost place, so the timeout bounds the whole wait. The lock
// package ends only a wait at the deadline: a lock that is free when zklock
// looks is taken whatever the timeout.
func (w WaitLimit) start(now time.Time) recipe.Wait {
	switch {
	case w.try:
		return recipe.NoWait
	case w.bounded:
		return recipe.WaitUntil(now.Add(w.timeout))
	}
	return recipe.WaitForever
}
