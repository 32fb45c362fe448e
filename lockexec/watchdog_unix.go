//go:build unix

package lockexec

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The watchdog is a small process beside the command: a dead man's switch
// for the command's process group. It is zklock's own executable started
// again in watchdog mode (see IsWatchdog), in a session of its own, so that
// terminal signals and job control meant for zklock or the command never
// reach it. It reads instructions from a pipe whose only writer is zklock:
//
//	arm PGID        the command's process group
//	at STOP KILL    send SIGTERM to the group at STOP, SIGKILL at KILL
//	                (nanoseconds of the shared clock, see clock_*.go; 0 for
//	                never), replacing any earlier pair
//	ok              zklock is done with the command: exit quietly
//
// It kills the group at once if the pipe reaches end-of-file before "ok":
// the kernel closes zklock's end when zklock dies, even by SIGKILL, which
// nothing can catch. And it kills the group when a deadline passes that
// zklock has not moved: zklock renews the deadlines every time the
// ZooKeeper ensemble confirms its session, so a zklock that is stopped
// (SIGSTOP, Ctrl-Z, a debugger), starved or swapped out stops renewing,
// and its command is dead by the time the ensemble could expire the
// session and hand the lock to someone else, whether or not zklock runs.
//
// Pdeathsig alone is not enough: it reaches only the direct child, and a
// command is typically a shell whose real work runs in grandchildren, which
// would keep running after zklock's session expired and the next holder
// started.
type Watchdog struct {
	cmd *exec.Cmd

	mu        sync.Mutex
	w         *os.File // nil once retired
	armed     bool
	stop      time.Time // the deadlines last sent; zero: none
	kill      time.Time
	failed    error // the first write that failed
	reportErr func(error)
}

// watchdogEnv marks the watchdog process; the value names the protocol
// version, so that an old zklock binary found on disk mid-upgrade is not
// mistaken for a compatible one.
const watchdogEnv = "ZKLOCK_INTERNAL_WATCHDOG=1"

// StartWatchdog starts a watchdog process. Its error is a *WatchdogError.
func StartWatchdog() (*Watchdog, error) {
	wd, err := startWatchdog()
	if err != nil {
		return nil, &WatchdogError{Op: "start", Err: err}
	}
	return wd, nil
}

func startWatchdog() (*Watchdog, error) {
	exe, err := selfExecutable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe() // close-on-exec: the command never inherits w
	if err != nil {
		return nil, err
	}
	// argv[0] stays zklock's own, so that a binary that dispatches on its
	// name (a test binary standing in for zklock) dispatches the same way.
	// GORACE: zklock waits for its watchdog's exit, and a build with the
	// race detector (the tests') would otherwise sleep a second on exit;
	// other builds ignore the variable.
	env := append(os.Environ(), watchdogEnv, "GOMAXPROCS=1",
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd := &exec.Cmd{Path: exe, Args: []string{os.Args[0]}, Stdin: r, Env: env,
		// Its own session: terminal signals (Ctrl-C, Ctrl-Z, hangup)
		// meant for the command or zklock must not reach it.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	return &Watchdog{cmd: cmd, w: w}, nil
}

// Renew moves the moments at which the watchdog sends SIGTERM and SIGKILL
// to the command's group, if zklock has not renewed them again by then.
// Safe for concurrent use, on a nil Watchdog, and after Retire.
func (wd *Watchdog) Renew(stop, kill time.Time) {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	wd.stop, wd.kill = stop, kill
	if wd.armed {
		wd.sendLocked(wd.deadlineLine())
	}
}

func (wd *Watchdog) deadlineLine() string {
	return fmt.Sprintf("at %d %d\n", toShared(wd.stop), toShared(wd.kill))
}

// arm tells the watchdog which process group to kill, and the deadlines
// renewed so far.
func (wd *Watchdog) arm(pgid int) error {
	if wd == nil {
		return nil
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.armed || wd.w == nil {
		return nil
	}
	wd.armed = true
	wd.sendLocked(fmt.Sprintf("arm %d\n", pgid))
	if !wd.stop.IsZero() {
		wd.sendLocked(wd.deadlineLine())
	}
	return wd.failed
}

func (wd *Watchdog) sendLocked(line string) {
	if wd.w == nil || wd.failed != nil {
		return
	}
	if _, err := wd.w.Write([]byte(line)); err != nil {
		wd.failed = err
	}
}

// stopped reports whether a deadline the watchdog enforces had passed at
// now: if so, the watchdog may have stopped the command, and the command's
// end is the lock's loss, not the command's own doing.
func (wd *Watchdog) stopped(now time.Time) bool {
	if wd == nil {
		return false
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	return wd.armed && !wd.stop.IsZero() && !now.Before(wd.stop)
}

// Retire tells the watchdog zklock is done with the command and reaps it.
// Safe on a nil Watchdog and more than once.
func (wd *Watchdog) Retire() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	w := wd.w
	if w != nil {
		if wd.armed {
			wd.sendLocked("ok\n")
		}
		wd.w = nil
	}
	wd.mu.Unlock()
	if w == nil {
		return
	}
	w.Close()
	_ = wd.cmd.Wait()
}
