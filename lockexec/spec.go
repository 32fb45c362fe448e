//go:build unix

package lockexec

import (
	"os"
	"strconv"
	"time"
)

// Policy says what Supervise does when the lock is lost while the command runs.
type Policy int

const (
	// Terminate sends SIGTERM to the command's process group, waits
	// KillGrace, then sends SIGKILL; Supervise returns an error wrapping
	// ErrLockLost.
	Terminate Policy = iota
	// Ignore only warns (via Spec.Warn); the command keeps running.
	Ignore
)

// String returns the name used in messages and flags.
func (p Policy) String() string {
	switch p {
	case Terminate:
		return "terminate"
	case Ignore:
		return "ignore"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// Urgency says how soon the command must be dead once its lock is lost.
// A loss cause that has an Urgency() Urgency method says which; any other
// cause counts as WithGrace.
type Urgency int

const (
	// WithGrace: the lock cannot be anyone else's yet (the loss is
	// foreseen, not yet happened), so the command gets SIGTERM and
	// LostKillGrace to end cleanly before SIGKILL.
	WithGrace Urgency = iota
	// AtOnce: the lock may already be someone else's. Every moment the
	// command runs on is a moment with two holders, so its whole group
	// gets SIGKILL at once, with no SIGTERM and no grace.
	AtOnce
)

// String returns the name used in messages.
func (u Urgency) String() string {
	switch u {
	case WithGrace:
		return "with grace"
	case AtOnce:
		return "at once"
	}
	return "Urgency(" + strconv.Itoa(int(u)) + ")"
}

// DefaultKillGrace is the grace zklock's --kill-grace flag defaults to.
// Five seconds is enough for a well-behaved command to flush and remove its
// temporary files, and short enough to end well within common ZooKeeper
// session timeouts (10-40s), so a command whose lock is gone does not keep
// running for long while another host may already hold the lock.
const DefaultKillGrace = 5 * time.Second

// killWait bounds how long Supervise waits, after SIGKILL, for the rest of the
// command's group to disappear. SIGKILL cannot be caught, so this only
// matters for processes stuck in the kernel (a hung NFS mount); Supervise warns
// and returns rather than block on them forever.
const killWait = time.Second

// groupPoll is how often Supervise checks whether the command's group is empty
// after the command itself has exited during a termination. It is a
// trade-off between returning promptly and scanning /proc too often.
const groupPoll = 20 * time.Millisecond

// Spec describes the command and how to supervise it.
type Spec struct {
	// Argv is the command and its arguments. Argv[0] is looked up in
	// zklock's own PATH (as execvp does) unless it contains '/'.
	Argv []string
	// Path, when set, is Argv[0] already resolved by Resolve; Supervise then
	// executes it without looking again.
	Path string
	// Env is the child's full environment; nil means os.Environ(). A
	// name given twice gets its last value, as with os/exec.
	Env []string
	// Stdin is passed straight through, so the child sees the terminal
	// itself and no goroutine copies data; nil means os.Stdin. When it is
	// zklock's controlling terminal, Supervise manages the foreground process
	// group (see the package documentation).
	Stdin *os.File
	// Stdout is passed straight through; nil means os.Stdout.
	Stdout *os.File
	// Stderr is passed straight through; nil means os.Stderr.
	Stderr *os.File
	// Signals carries signals zklock received; each is sent to the
	// command's process group. Closing it stops forwarding.
	Signals <-chan os.Signal
	// Lost receives a value (the reason, may be nil) or is closed when the
	// lock is lost; nil means the lock is never lost.
	Lost <-chan error
	// OnLost is what to do when Lost fires.
	OnLost Policy
	// Revoked receives a value (the reason) when someone asks the holder
	// to give the lock up; nil means nobody can. The lock is still held,
	// so Supervise stops the command with the full KillGrace and returns an
	// error wrapping ErrLockRevoked; the caller then releases the lock.
	Revoked <-chan error
	// OnRevoke is what to do when Revoked fires: Terminate as above, or
	// Ignore, which only warns, each time, and lets the command finish.
	OnRevoke Policy
	// KillGrace is the time between SIGTERM and SIGKILL when Supervise stops the
	// command at MaxRuntime: 0 sends SIGKILL right after SIGTERM.
	KillGrace time.Duration
	// LostKillGrace is the same when the lock is lost: 0 sends SIGKILL
	// right after SIGTERM. It is its own value because it has to fit in
	// what is left of the session timeout (the caller caps it), while a
	// stop at MaxRuntime may take the user's full grace. A loss whose
	// cause has a KillBy() time.Time method shortens it to end by then;
	// one whose Urgency is AtOnce gets no grace at all (see Urgency).
	LostKillGrace time.Duration
	// MaxRuntime, when positive, bounds the command's run time: once
	// exceeded, the group is stopped as on lock loss and Supervise returns an
	// error wrapping ErrMaxRuntime. 0 means unlimited.
	MaxRuntime time.Duration
	// Watchdog is the caller's watchdog (see StartWatchdog), or nil for
	// none. Supervise arms it with the command's process group; the caller
	// starts it and retires it, after releasing the lock, so that neither
	// its start nor its exit delays the command or the next holder.
	Watchdog *Watchdog
	// Warn receives one-line warnings, without a "zklock: " prefix; nil
	// discards them. It is called from Supervise's goroutine with SIGTTOU
	// blocked on its thread, so a direct write to a terminal the command
	// owns cannot stop zklock under `stty tostop`: write there rather than
	// hand the message to another goroutine.
	Warn func(string)
	// Started, when set, is called once the command has started, with its
	// pid (which leads its process group). It is called from Run's
	// goroutine, as Warn is, before Run supervises the command: it must
	// return soon.
	Started func(pid int)
}
