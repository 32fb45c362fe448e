package runner

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// ConflictError means the lock was not taken because someone else held it:
// tryrun found it busy, or run's --timeout expired. Code is the exit code the
// user chose for that case (--conflict-exit-code, 75 by default).
type ConflictError struct {
	Err  error
	Code int
}

func (e *ConflictError) Error() string { return e.Err.Error() }
func (e *ConflictError) Unwrap() error { return e.Err }

// WaitTimeoutError means the wait for the locks ran out of its timeout.
type WaitTimeoutError struct {
	Paths []string
	After time.Duration
	// Waiting is the path waited on last, and Holders those who held it
	// then (nil if unknown).
	Waiting string
	Holders []recipe.Entry
}

func (e *WaitTimeoutError) Error() string {
	return fmt.Sprintf("%v %s after %s", recipe.ErrWaitTimeout, strings.Join(e.Paths, " "), e.After)
}

func (e *WaitTimeoutError) Unwrap() error { return recipe.ErrWaitTimeout }

// SignalError means a signal ended the wait before the command started.
type SignalError struct {
	Signal syscall.Signal
}

func (e *SignalError) Error() string {
	return fmt.Sprintf("interrupted by %s while waiting for the lock", lockexec.SignalName(e.Signal))
}

// UpgradeError means an ancestor zklock holds a shared lock on Path and this
// run asks for it exclusively. Waiting would never end: the ancestor
// releases only after its command, which waits for this run, has exited.
type UpgradeError struct {
	Path string
	PID  int // the ancestor zklock
}

func (e *UpgradeError) Error() string {
	return fmt.Sprintf("%s is held shared by zklock pid %d, an ancestor of this one: an exclusive lock inside it would wait for itself forever", e.Path, e.PID)
}

// OnceHeldError means the path that keeps the success record is held by an
// ancestor zklock: this one holds no node there whose write would tell the
// server's time, and the record belongs to the ancestor's run.
type OnceHeldError struct {
	Path string
	PID  int // the ancestor zklock
	// OrderKey is set when the record was wanted for --order-key rather
	// than --once-per.
	OrderKey bool
}

// Flag is the flag that wanted the record.
func (e *OnceHeldError) Flag() string {
	if e.OrderKey {
		return "--order-key"
	}
	return "--once-per"
}

func (e *OnceHeldError) Error() string {
	return fmt.Sprintf("%s is held by zklock pid %d, an ancestor of this one, so this run cannot keep its success record", e.Path, e.PID)
}

// RecentSuccessError means the command was not run: it last succeeded
// under the lock less than Window ago by the youngest age the clocks give
// it. Doubt says how the clocks disagree, when they do: the run was
// skipped until the youngest age passes the window, so that the job runs at
// most once.
type RecentSuccessError struct {
	Last   success.Record
	Age    time.Duration // the youngest age known (see recordAge)
	Window time.Duration
	Doubt  *ClockDoubt // nil when the clocks agree
}

func (e *RecentSuccessError) Error() string {
	if e.Doubt != nil {
		return fmt.Sprintf("not running %s: its last success is %s; skipped until every age passes the window of %s, in %s unless a clock steps again",
			e.Last.Path, e.Doubt, e.Window, roundAge(e.Window-e.Age))
	}
	return fmt.Sprintf("%s last succeeded %s ago, within the window of %s", e.Last.Path, roundAge(e.Age), e.Window)
}

// maxUnplacedSessions is how many sessions in a row may be lost before
// joining a queue until the wait gives up (UnkeptSessionError).
const maxUnplacedSessions = 3

// UnkeptSessionError means that Sessions sessions in a row were lost
// before they could join the queue: the ensemble could be reached, but the
// link kept no session for as long as it took to create a node. It is a
// connection failure (zkconn.ErrUnavailable), said once, instead of a wait
// that would open new sessions forever.
type UnkeptSessionError struct {
	Sessions  int
	Timeout   time.Duration // the session timeout the last one was granted
	RoundTrip time.Duration // measured on the last one's connection
	Safe      time.Duration // SafeTimeout for that round trip
	Last      error         // how the last one was lost
}

func (e *UnkeptSessionError) Error() string {
	return fmt.Sprintf("%v: %d sessions in a row were lost before they could join the queue (session timeout %s, round trip %s); the last: %v",
		zkconn.ErrUnavailable, e.Sessions, e.Timeout, roundTripText(e.RoundTrip), e.Last)
}

func (e *UnkeptSessionError) Unwrap() error { return zkconn.ErrUnavailable }
