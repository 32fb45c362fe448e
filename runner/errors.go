package runner

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock/lock"
	"github.com/zklock/zklock/lockexec"
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
	Holders []lock.Entry
}

func (e *WaitTimeoutError) Error() string {
	return fmt.Sprintf("%v %s after %s", lock.ErrWaitTimeout, strings.Join(e.Paths, " "), e.After)
}

func (e *WaitTimeoutError) Unwrap() error { return lock.ErrWaitTimeout }

// SignalError means a signal ended the wait before the command started.
type SignalError struct {
	Signal syscall.Signal
}

func (e *SignalError) Error() string {
	return fmt.Sprintf("interrupted by %s while waiting for the lock", lockexec.SignalName(e.Signal))
}
