//go:build unix

package lockexec

import (
	"bytes"
	"os"
	"os/signal"
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
//
// It is one goroutine that sleeps in poll(2) on its pipe until a line
// arrives or the next deadline is due, and it allocates nothing once it
// runs: its process starts with the garbage collector off (see
// watchdogEnviron), and no timer, channel or goroutine of the runtime's is
// involved.
func WatchdogMain() int {
	// In a session of its own nothing should signal it, but a stray
	// SIGHUP or SIGINT must not end the switch early.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGPIPE)
	var (
		sw  = deadmanSwitch{tell: true}
		buf [512]byte // a line is far shorter; a longer one is dropped
		n   int       // bytes of an unfinished line in buf
		fds = []unix.PollFd{{Fd: 0, Events: unix.POLLIN}}
	)
	for {
		nap := sw.nap(sharedNow())
		fds[0].Revents = 0
		_, err := unix.Poll(fds, int((nap+time.Millisecond-1)/time.Millisecond))
		if err != nil && err != unix.EINTR {
			// Standard input is broken: no instruction can come, as
			// when zklock is gone.
			sw.fire(syscall.SIGKILL)
			return 0
		}
		if fds[0].Revents != 0 {
			r, err := unix.Read(0, buf[n:])
			if err == unix.EINTR || err == unix.EAGAIN {
				continue
			}
			if r <= 0 {
				// End of file: zklock is gone without saying "ok".
				sw.fire(syscall.SIGKILL)
				return 0
			}
			n += r
			for {
				i := bytes.IndexByte(buf[:n], '\n')
				if i < 0 {
					break
				}
				if string(buf[:i]) == "ok" {
					return 0
				}
				sw.handle(buf[:i])
				n = copy(buf[:], buf[i+1:n])
			}
			if n == len(buf) {
				n = 0
			}
		}
		sw.check(sharedNow())
	}
}

// deadmanSwitch is the watchdog's state; times are shared-clock
// nanoseconds, 0 for none.
type deadmanSwitch struct {
	pgid            int
	stopAt, killAt  int64
	stopped, killed bool
	// tell: write a byte on standard output (zklock's report pipe) for
	// each signal sent at a deadline.
	tell bool
}

// firedByte is what the watchdog writes to say it fired; a global, so
// that the write allocates nothing.
var firedByte = [1]byte{'!'}

// handle takes one instruction line. It parses in place: the watchdog
// allocates nothing once it runs.
func (s *deadmanSwitch) handle(line []byte) {
	verb, rest, _ := bytes.Cut(line, []byte(" "))
	switch string(verb) {
	case "arm":
		if pgid, ok := parseInt(rest); ok {
			s.pgid = int(pgid)
		}
	case "at":
		stop, kill, _ := bytes.Cut(rest, []byte(" "))
		st, ok1 := parseInt(stop)
		k, ok2 := parseInt(kill)
		if ok1 && ok2 {
			s.stopAt, s.killAt = st, k
		}
	}
}

// parseInt reads a non-negative decimal number.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
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
		s.report()
	}
	if !s.killed && s.killAt > 0 && now >= s.killAt {
		s.killed = true
		s.fire(syscall.SIGKILL)
		s.report()
	}
}

// nap is how long to sleep before the next deadline is due. A deadline
// already acted on is due no more: counting it would turn the poll into a
// busy loop until zklock says "ok", a whole CPU for as long as a zklock
// suspended past its deadline stays suspended.
func (s *deadmanSwitch) nap(now int64) time.Duration {
	d := maxNap
	if s.pgid <= 0 {
		return d
	}
	if s.stopAt > 0 && !s.stopped {
		d = min(d, max(time.Duration(s.stopAt-now), 0))
	}
	if s.killAt > 0 && !s.killed {
		d = min(d, max(time.Duration(s.killAt-now), 0))
	}
	return d
}

// report tells zklock that a deadline passed unrenewed (Watchdog.Fired),
// after the signal: zklock reads it only once it runs again.
func (s *deadmanSwitch) report() {
	if s.tell {
		_, _ = unix.Write(1, firedByte[:])
	}
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
