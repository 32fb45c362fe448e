//go:build unix

package lockexec

import (
	"bufio"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// IsWatchdog reports whether this process was started by StartWatchdog.
// The program's entry point checks it first and, if so, runs
// WatchdogMain instead of anything else.
func IsWatchdog() bool {
	return os.Getenv("ZKLOCK_INTERNAL_WATCHDOG") == "1"
}

// maxNap bounds each sleep of the watchdog, so that a deadline is checked
// against the shared clock at least this often: after a machine's suspend
// the process's own timers lag the clock that the ZooKeeper servers kept.
const maxNap = time.Second

// WatchdogMain is the watchdog process: it follows the instructions on
// standard input (see Watchdog) and returns its exit code.
func WatchdogMain() int {
	// In a session of its own nothing should signal it, but a stray
	// SIGHUP or SIGINT must not end the switch early.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGPIPE)
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var sw deadmanSwitch
	nap := time.NewTimer(maxNap)
	defer nap.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				// zklock is gone without saying "ok".
				sw.fire(syscall.SIGKILL)
				return 0
			}
			if line == "ok" {
				return 0
			}
			sw.handle(line)
		case <-nap.C:
		}
		sw.check(sharedNow())
		nap.Reset(sw.nap(sharedNow()))
	}
}

// deadmanSwitch is the watchdog's state; times are shared-clock
// nanoseconds, 0 for none.
type deadmanSwitch struct {
	pgid            int
	stopAt, killAt  int64
	stopped, killed bool
}

func (s *deadmanSwitch) handle(line string) {
	f := strings.Fields(line)
	switch {
	case len(f) == 2 && f[0] == "arm":
		s.pgid, _ = strconv.Atoi(f[1])
	case len(f) == 3 && f[0] == "at":
		s.stopAt, _ = strconv.ParseInt(f[1], 10, 64)
		s.killAt, _ = strconv.ParseInt(f[2], 10, 64)
	}
}

// check sends what is due. A signal once sent is never taken back: a
// renewal that arrives after the deadline is a renewal too late.
func (s *deadmanSwitch) check(now int64) {
	if s.pgid <= 0 {
		return
	}
	if !s.stopped && s.stopAt > 0 && now >= s.stopAt {
		s.stopped = true
		s.fire(syscall.SIGTERM)
		// A stopped group (Ctrl-Z) keeps SIGTERM pending until continued.
		s.fire(syscall.SIGCONT)
	}
	if !s.killed && s.killAt > 0 && now >= s.killAt {
		s.killed = true
		s.fire(syscall.SIGKILL)
	}
}

// nap is how long to sleep before the next deadline is due.
func (s *deadmanSwitch) nap(now int64) time.Duration {
	d := maxNap
	for _, at := range []int64{s.stopAt, s.killAt} {
		if at > 0 && s.pgid > 0 {
			d = min(d, max(time.Duration(at-now), 0))
		}
	}
	return d
}

func (s *deadmanSwitch) fire(sig syscall.Signal) {
	if s.pgid > 0 {
		_ = unix.Kill(-s.pgid, sig)
	}
}

// toShared converts a moment of this process's clock to the shared clock;
// the zero time is 0, for none.
func toShared(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return sharedNow() + int64(time.Until(t))
}
