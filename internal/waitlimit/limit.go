// Package waitlimit holds how long a command waits for its locks, as the
// user gave it: not at all (tryrun), at most a timeout (--timeout), or
// until they are held. It is a duration, not a deadline: the deadline is
// fixed only once the wait starts (From), since connecting is not part of
// what --timeout bounds for run, and is for revoke.
package waitlimit

import (
	"time"

	"github.com/zklock/zklock/internal/recipe"
)

// Limit is how long to wait: None, Forever or AtMost(d).
type Limit struct {
	try     bool
	timeout time.Duration // with bounded: the timeout
	bounded bool
}

var (
	// None gives up at once if a lock is not free (tryrun).
	None = Limit{try: true}
	// Forever waits until the locks are held, or a signal ends the wait.
	Forever = Limit{}
)

// AtMost waits for at most d; a d of zero or less does not wait at all.
func AtMost(d time.Duration) Limit {
	if d <= 0 {
		return None
	}
	return Limit{timeout: d, bounded: true}
}

// Timeout returns the timeout, if the wait has one.
func (l Limit) Timeout() (time.Duration, bool) { return l.timeout, l.bounded }

// From turns the limit into the recipes' terms at the moment the wait
// starts: one deadline, which then bounds every path and every rejoin
// after a lost place together. A lock that is free when the recipe looks
// is taken whatever the deadline.
func (l Limit) From(start time.Time) recipe.Wait {
	switch {
	case l.try:
		return recipe.NoWait
	case l.bounded:
		return recipe.WaitUntil(start.Add(l.timeout))
	}
	return recipe.WaitForever
}
