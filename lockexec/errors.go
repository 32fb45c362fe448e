//go:build unix

package lockexec

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// ErrLockLost is wrapped by Supervise's error when the lock was lost and the
// policy was Terminate.
var ErrLockLost = errors.New("lock lost while the command ran")

// ErrLockRevoked is wrapped by Supervise's error when the command was stopped because
// someone asked for the lock to be given up (Spec.Revoked).
var ErrLockRevoked = errors.New("lock revoked while the command ran")

// ErrUnrenewed is the cause of a loss that the watchdog, not zklock, acted on:
// zklock stopped renewing its deadline (stopped, starved), or the two
// reached the same deadline and the watchdog came first.
var ErrUnrenewed = errors.New("zklock did not confirm the session in time (was it stopped or starved?): the watchdog stopped the command")

// unrenewedError is ErrUnrenewed with the moment by which the watchdog
// SIGKILLs the group, so that the grace zklock announces is the one left.
type unrenewedError struct{ kill time.Time }

func (e *unrenewedError) Error() string     { return ErrUnrenewed.Error() }
func (e *unrenewedError) Unwrap() error     { return ErrUnrenewed }
func (e *unrenewedError) KillBy() time.Time { return e.kill }

// ErrMaxRuntime is wrapped by Supervise's error when the command ran longer than
// Spec.MaxRuntime.
var ErrMaxRuntime = errors.New("command exceeded its maximum run time")

// ExitError carries the command's own outcome when it did not exit 0.
type ExitError struct {
	// Code is what a shell would report as $?: the exit status, or 128+N
	// when the command was killed by signal N.
	Code int
	// Signal is the signal that killed the command, 0 if it exited.
	Signal syscall.Signal
}

func (e *ExitError) Error() string {
	if e.Signal != 0 {
		return "command killed by " + SignalName(e.Signal)
	}
	return fmt.Sprintf("command exited with status %d", e.Code)
}

// StartError says the command could not be started. Code follows the shell
// convention: 127 when it was not found, 126 when it was found but could
// not be executed (no permission, a directory, not a valid executable, a
// missing #! interpreter, ...).
type StartError struct {
	Name string // Argv[0] as given
	Code int    // 127 or 126
	Err  error  // the underlying error (exec.ErrNotFound, a syscall.Errno)
}

func (e *StartError) Error() string {
	if e.Name == "" {
		// Said plainly: "cannot run : executable file not found" reads
		// as a name lost in the message, not as an empty one given.
		return "cannot run an empty command name (\"\")"
	}
	return fmt.Sprintf("cannot run %s: %v", e.Name, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// TerminatedError is returned when Supervise itself stopped the command: the lock
// was lost (policy Terminate), --max-runtime passed, or ctx was cancelled.
// It wraps Reason, Cause and Exit, so errors.Is(err, ErrLockLost) and
// errors.As(err, &exitErr) both work.
type TerminatedError struct {
	// Reason is ErrLockLost, ErrLockRevoked, ErrMaxRuntime or ctx.Err().
	Reason error
	// Cause is the error received on Spec.Lost, or context.Cause when it
	// says more than ctx.Err(); nil otherwise.
	Cause error
	// Exit is how the command ended; nil when it exited 0 (a command that
	// handles SIGTERM cleanly).
	Exit *ExitError
	// Killed is true when SIGKILL was sent: the grace period ran out, or
	// the loss was one that allows none (Urgency AtOnce).
	Killed bool
	// Grace is the grace period that applied, for the message.
	Grace time.Duration
}

func (e *TerminatedError) Error() string {
	var b strings.Builder
	b.WriteString(e.Reason.Error())
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	b.WriteString(" (")
	if e.Exit != nil {
		b.WriteString(e.Exit.Error())
	} else {
		b.WriteString("command exited with status 0")
	}
	switch {
	case e.Killed && e.Grace == 0:
		b.WriteString("; SIGKILL with no grace period")
	case e.Killed:
		fmt.Fprintf(&b, "; SIGKILL after a %v grace period", e.Grace)
	}
	b.WriteString(")")
	return b.String()
}

func (e *TerminatedError) Unwrap() []error {
	errs := []error{e.Reason}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	if e.Exit != nil {
		errs = append(errs, e.Exit)
	}
	return errs
}

// exitResult converts a wait status of a command that has ended.
func exitResult(ws syscall.WaitStatus) *ExitError {
	switch {
	case ws.Signaled():
		return &ExitError{Code: 128 + int(ws.Signal()), Signal: ws.Signal()}
	case ws.ExitStatus() != 0:
		return &ExitError{Code: ws.ExitStatus()}
	}
	return nil
}

// WatchdogError means the watchdog could not be started or armed, or has
// ended before zklock was done with it (Op "keep", Err ErrWatchdogGone,
// see Watchdog.Gone). The command still runs; only the guard against
// zklock's own death or freeze is weaker, which is what the message says.
type WatchdogError struct {
	Op  string // "start", "arm" or "keep"
	Pid int    // the watchdog's process, once it was started
	Err error
}

func (e *WatchdogError) Error() string {
	if e.Op == "keep" {
		return fmt.Sprintf("%v (pid %d): if zklock is now stopped or killed, nothing stops the command's process group", e.Err, e.Pid)
	}
	return fmt.Sprintf("cannot %s the watchdog (%v): if zklock is killed, only the command's direct child dies with it", e.Op, e.Err)
}

func (e *WatchdogError) Unwrap() error { return e.Err }
