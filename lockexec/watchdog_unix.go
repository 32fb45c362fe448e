//go:build unix

package lockexec

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The watchdog is a small process beside the command: a dead man's switch
// for the command's process group. On linux/amd64 it is a fork of zklock
// that runs a loop of system calls in a few pages of its own (the
// in-memory watchdog, thinwatch_linux_amd64.go). Elsewhere, or where the
// kernel lacks what that needs, it is zklock's own executable started
// again in watchdog mode (see IsWatchdog). Either runs in a session of its
// own, so that terminal signals and job control meant for zklock or the
// command never reach it. The process reads instructions from a pipe
// whose only writer is zklock (the in-memory one reads the same from a
// page it shares with zklock, and the pipe only wakes it):
//
//	arm PGID        the command's process group
//	at STOP KILL    send SIGTERM to the group at STOP, SIGKILL at KILL
//	                (nanoseconds of the shared clock, see clock_*.go; 0 for
//	                never), replacing any earlier pair
//	ok              zklock is done with the command, which has exited by
//	                itself or is being retired: exit quietly, signalling
//	                nothing (zklock kills it at Retire; see disarm)
//
// It writes a byte on its standard output, a pipe whose only reader is
// zklock, when it signals the group at a deadline, so that zklock can say
// that its watchdog, not itself, stopped the command (see Fired).
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
	pid int
	// thin is the in-memory watchdog's shared page (thinwatch_*.go); nil
	// for a watchdog process, which the fields below speak to.
	thin *thinWatch
	// report is the read end of the watchdog's standard output; nil once
	// retired.
	report *os.File

	mu      sync.Mutex
	w       *os.File // nil once retired
	fired   bool     // a byte came on report
	armed   bool
	retired bool      // the in-memory watchdog's: Retire has begun
	stop    time.Time // the deadlines last sent; zero: none
	kill    time.Time
	failed  error // the first write that failed
}

// watchdogEnv marks the watchdog process; the value names the protocol
// version, so that an old zklock binary found on disk mid-upgrade is not
// mistaken for a compatible one.
const watchdogEnv = "ZKLOCK_INTERNAL_WATCHDOG=1"

// StartWatchdog starts a watchdog. Its error is a *WatchdogError. When it
// returns, the watchdog runs: it has been forked, or its exec has
// succeeded, and it holds the read end of the pipe, so from then on
// zklock's death closes that pipe under it, whether or not it has got as
// far as reading it.
func StartWatchdog() (*Watchdog, error) {
	wd, err := startWatchdog()
	if err != nil {
		return nil, &WatchdogError{Op: "start", Err: err}
	}
	return wd, nil
}

func startWatchdog() (*Watchdog, error) {
	if !watchdogProcessOnly {
		if pid, tw, err := startThin(); err == nil {
			return &Watchdog{pid: pid, thin: tw}, nil
		}
	}
	return startWatchdogProcess()
}

// watchdogProcessOnly makes StartWatchdog start the watchdog process even
// where the in-memory watchdog would do; tests set it to cover both.
var watchdogProcessOnly = false

func startWatchdogProcess() (*Watchdog, error) {
	exe, err := selfExecutable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe() // close-on-exec: the command never inherits w
	if err != nil {
		return nil, err
	}
	report, tell, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	// syscall.ForkExec rather than os/exec: os/exec's first start in a
	// process forks a throwaway child to probe for pidfd support and opens
	// /dev/null twice for the missing stdout and stderr; the watchdog needs
	// none of that. Its stdout is the report pipe, its stderr closed (it
	// never writes there; its runtime puts /dev/null there). argv[0]
	// stays zklock's own, so that a
	// binary that dispatches on its name (a test binary standing in for
	// zklock) dispatches the same way.
	pid, err := syscall.ForkExec(exe, []string{os.Args[0]}, &syscall.ProcAttr{
		Env:   watchdogEnviron(os.Environ()),
		Files: []uintptr{r.Fd(), tell.Fd(), ^uintptr(0)},
		// Its own session: terminal signals (Ctrl-C, Ctrl-Z, hangup)
		// meant for the command or zklock must not reach it.
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	r.Close()
	tell.Close()
	if err != nil {
		w.Close()
		report.Close()
		return nil, err
	}
	return &Watchdog{pid: pid, w: w, report: report}, nil
}

// watchdogEnviron is the watchdog's environment: zklock's, with the marker
// and the runtime settings that keep a process which only waits on a pipe
// small. One thread for Go code from the start (a second P costs a few
// hundred KiB of memory that the process never gives back), and no garbage
// collector, since WatchdogMain allocates nothing once it runs. GORACE:
// zklock waits for its watchdog's exit, and a build with the race detector
// (the tests') would otherwise sleep a second on exit; other builds ignore
// the variable.
func watchdogEnviron(env []string) []string {
	out := make([]string, 0, len(env)+4)
	race := ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "ZKLOCK_INTERNAL_WATCHDOG":
			continue
		case "GORACE":
			race = v
			continue
		}
		out = append(out, kv)
	}
	return append(out, watchdogEnv, "GOMAXPROCS=1", "GOGC=off",
		"GORACE="+strings.TrimSpace(race+" atexit_sleep_ms=0"))
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
	if wd.thin != nil {
		if !wd.retired && wd.failed == nil {
			wd.failed = wd.thin.set(0, toShared(stop), toShared(kill))
		}
		return
	}
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
	if wd.thin != nil {
		if !wd.armed && !wd.retired && wd.failed == nil {
			wd.armed = true
			wd.failed = wd.thin.set(pgid, toShared(wd.stop), toShared(wd.kill))
		}
		return wd.failed
	}
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

// disarm tells the watchdog that the command has exited by itself: it
// signals nothing from then on, at a deadline or at zklock's death, and
// exits. Retire still ends and reaps it.
func (wd *Watchdog) disarm() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.thin != nil {
		if !wd.retired {
			wd.thin.standDown()
		}
		return
	}
	if wd.armed {
		wd.sendLocked("ok\n")
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

// killAt is when the watchdog SIGKILLs the group; zero if never.
func (wd *Watchdog) killAt() time.Time {
	if wd == nil {
		return time.Time{}
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	return wd.kill
}

// Fired reports whether the watchdog has signalled the command's group
// because a deadline passed that zklock had not moved: zklock was stopped
// or starved, or reached the same deadline after the watchdog did. It
// never blocks. Safe for concurrent use, on a nil Watchdog, and after
// Retire.
func (wd *Watchdog) Fired() bool {
	if wd == nil {
		return false
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.thin != nil {
		if !wd.retired { // once retired, its page is gone: the last count was kept
			wd.fired = wd.thin.fired()
		}
		return wd.fired
	}
	if wd.fired || wd.report == nil {
		return wd.fired
	}
	rc, err := wd.report.SyscallConn()
	if err != nil {
		return false
	}
	// os.Pipe's descriptors are non-blocking: an empty pipe says EAGAIN.
	_ = rc.Control(func(fd uintptr) {
		var b [1]byte
		if n, _ := syscall.Read(int(fd), b[:]); n > 0 {
			wd.fired = true
		}
	})
	return wd.fired
}

// Retire tells the watchdog zklock is done with the command, ends it and
// reaps it. Safe on a nil Watchdog and more than once.
func (wd *Watchdog) Retire() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	if wd.thin != nil {
		// Under the lock: the page goes with the watchdog, and Fired
		// must read the last count from it first.
		if !wd.retired {
			wd.retired = true
			wd.fired = wd.thin.retire(wd.pid)
		}
		wd.mu.Unlock()
		return
	}
	w := wd.w
	if w != nil {
		if wd.armed {
			wd.sendLocked("ok\n")
		}
		wd.w = nil
	}
	if wd.report != nil {
		wd.report.Close()
		wd.report = nil
	}
	wd.mu.Unlock()
	if w == nil {
		return
	}
	w.Close()
	// Its work is done once "ok" (or, unarmed, the end of the pipe) is on
	// its way, so it is killed rather than waited for: a watchdog started
	// just before a short command may not yet have got as far as reading,
	// and zklock's exit would wait for the rest of its start-up. It is
	// zklock's unreaped child, so its pid cannot have been reused; and were
	// zklock to die before the kill, "ok" is already in the pipe.
	_ = syscall.Kill(wd.pid, syscall.SIGKILL)
	reap(wd.pid)
}

// reap waits for a child of zklock's to exit.
func reap(pid int) {
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
			return
		}
	}
}
