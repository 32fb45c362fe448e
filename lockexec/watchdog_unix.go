//go:build unix

package lockexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/deadman"
)

// The watchdog is a small process beside the command: a dead man's switch
// for the command's process group (internal/deadman). It is one design on
// every platform: a process that runs plain Go, started with fork and exec.
// The program is zklock-watchdog, which the packages install beside
// zklock and which links nothing but the switch, so that its start costs
// a fraction of zklock's; where it is missing (a `go install`, a test
// binary), zklock starts its own executable, which runs the same code
// from its entry point (see IsWatchdog). It runs in a session of its own,
// so that terminal signals and job control meant for zklock or the command
// never reach it. It reads instructions from a pipe whose only writer is
// zklock:
//
//	arm PGID        the command's process group
//	at STOP KILL    send SIGTERM to the group at STOP, SIGKILL at KILL
//	                (nanoseconds of the shared clock, deadman.Now; 0 for
//	                never), replacing any earlier pair
//	ok              zklock is done with the command, which has exited by
//	                itself or is being retired: exit quietly, signalling
//	                nothing (zklock kills it at Retire; see disarm)
//
// It writes a byte on its standard output, a pipe whose only reader is
// zklock, when it signals the group at a deadline, so that zklock can say
// that its watchdog, not itself, stopped the command (see Fired). The same
// pipe's end tells zklock at once that the watchdog is gone (see Gone).
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
	pid     int
	program string // the file it runs, which is also the gate (gate_unix.go)
	// report is the read end of the watchdog's standard output, read by
	// the goroutine that watch runs until Retire closes it.
	report  *os.File
	gone    chan struct{} // closed when the watchdog ended before Retire
	watched chan struct{} // closed when watch has returned

	mu       sync.Mutex
	w        *os.File // nil once retired
	fired    bool     // a byte came on report
	armed    bool
	finished bool      // "ok" sent, or retired: its end is expected
	stop     time.Time // the deadlines last sent; zero: none
	kill     time.Time
	failed   error // the first write that failed
}

// CompanionName is the watchdog's own program, looked for beside zklock's
// executable.
const CompanionName = "zklock-watchdog"

// companion, if set, is the watchdog program to start instead of the one
// beside the executable; tests set it.
var companion = ""

// StartWatchdog starts a watchdog. Its error is a *WatchdogError. When it
// returns, the watchdog runs: its exec has succeeded, and it holds the
// read end of the pipe, so from then on zklock's death closes that pipe
// under it, whether or not it has got as far as reading it.
func StartWatchdog() (*Watchdog, error) {
	wd, err := startWatchdog()
	if err != nil {
		return nil, &WatchdogError{Op: "start", Err: err}
	}
	return wd, nil
}

// watchdogProgram is the program to start as the watchdog: the companion
// beside the running executable if it is there, else the executable itself.
func watchdogProgram() (string, error) {
	if companion != "" {
		return companion, nil
	}
	self, err := selfExecutable()
	if err != nil {
		return "", err
	}
	if exe, err := os.Executable(); err == nil {
		if p, ok := companionBeside(exe); ok {
			return p, nil
		}
	}
	return self, nil
}

// companionBeside is the companion in the directory of exe, links
// resolved: a zklock started through a symbolic link (/usr/local/bin/zklock
// to /opt/zklock/zklock) finds the companion installed beside the real
// file. ok is false if there is no executable file of that name there.
func companionBeside(exe string) (string, bool) {
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", false
	}
	p := filepath.Join(filepath.Dir(real), CompanionName)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", false
	}
	return p, true
}

func startWatchdog() (*Watchdog, error) {
	exe, err := watchdogProgram()
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
	// stays zklock's own, so that a binary that dispatches on its name (a
	// test binary standing in for zklock) dispatches the same way.
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
	wd := &Watchdog{pid: pid, program: exe, w: w, report: report, gone: make(chan struct{}), watched: make(chan struct{})}
	go wd.watch()
	return wd, nil
}

// watchdogEnviron is the watchdog's environment: zklock's, with the marker
// and the runtime settings that keep a process which only waits on a pipe
// small. One thread for Go code from the start (a second P costs a few
// hundred KiB of memory that the process never gives back), and no garbage
// collector, since the watchdog allocates nothing once it runs. GORACE:
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
	return append(out, deadman.Marker, "GOMAXPROCS=1", "GOGC=off",
		"GORACE="+strings.TrimSpace(race+" atexit_sleep_ms=0"))
}

// IsWatchdog reports whether this process was started by StartWatchdog.
// A program that can stand in for zklock-watchdog (zklock itself, a test
// binary) checks it first and, if so, runs WatchdogMain instead of
// anything else.
func IsWatchdog() bool { return deadman.Is() }

// WatchdogMain is the watchdog process: it follows the instructions on
// standard input (see Watchdog) and returns its exit code.
func WatchdogMain() int { return deadman.Main() }

// watch reads the watchdog's reports until Retire closes the pipe: a byte
// for each signal it sent at a deadline, and the pipe's end when it exits.
func (wd *Watchdog) watch() {
	defer close(wd.watched)
	var b [16]byte
	for {
		n, err := wd.report.Read(b[:])
		wd.mu.Lock()
		if n > 0 {
			wd.fired = true
		}
		if err != nil {
			// io.EOF: every copy of the write end is closed, so the
			// watchdog has exited; os.ErrClosed: Retire closed ours.
			if errors.Is(err, io.EOF) && !wd.finished {
				close(wd.gone)
			}
			wd.mu.Unlock()
			return
		}
		wd.mu.Unlock()
	}
}

// ErrWatchdogGone says that the watchdog process ended while zklock still
// counted on it (an operator killed it, the out-of-memory killer picked it):
// from then on nothing stops the command if zklock is stopped or killed.
var ErrWatchdogGone = errors.New("the watchdog process has ended")

// Gone is closed as soon as the watchdog process ends before zklock is done
// with it; Err then says so. It is never closed for a nil Watchdog.
func (wd *Watchdog) Gone() <-chan struct{} {
	if wd == nil {
		return nil
	}
	return wd.gone
}

// Err is a *WatchdogError wrapping ErrWatchdogGone once Gone is closed,
// and nil until then.
func (wd *Watchdog) Err() error {
	if wd == nil {
		return nil
	}
	select {
	case <-wd.gone:
		return &WatchdogError{Op: "keep", Pid: wd.pid, Err: ErrWatchdogGone}
	default:
		return nil
	}
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

// disarm tells the watchdog that the command has exited by itself: it
// signals nothing from then on, at a deadline or at zklock's death, and
// exits. Retire still ends and reaps it.
func (wd *Watchdog) disarm() {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.armed {
		wd.finished = true
		wd.sendLocked("ok\n")
	}
}

// stopped reports whether a deadline the watchdog enforces had passed at
// now: if so, the watchdog may have stopped the command, and the command's
// end is the lock's loss, not the command's own doing. A watchdog that is
// gone stopped nothing, whatever the deadlines say.
func (wd *Watchdog) stopped(now time.Time) bool {
	if wd == nil || wd.Err() != nil {
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
	if wd.fired || wd.w == nil {
		return wd.fired
	}
	// The byte may be in the pipe before watch has run to read it (with
	// one P, a goroutine made runnable waits for its turn): look, too.
	// os.Pipe's descriptors are non-blocking: an empty pipe says EAGAIN.
	rc, err := wd.report.SyscallConn()
	if err != nil {
		return false
	}
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
	w := wd.w
	if w != nil {
		if wd.armed {
			wd.sendLocked("ok\n")
		}
		wd.finished = true
		wd.w = nil
	}
	wd.mu.Unlock()
	if w == nil {
		<-wd.watched
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
	wd.report.Close()
	<-wd.watched
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

// toShared converts a moment of this process's clock to the shared clock;
// the zero time is 0, for none.
func toShared(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return deadman.Now() + int64(time.Until(t))
}
