// Package deadman is the watchdog process: the dead man's switch that
// kills a command's process group when zklock stops renewing its deadlines
// or dies. lockexec.Watchdog is zklock's side of it and describes the
// protocol; this package is the other side, kept apart so that the small
// program that hosts it (cmd/zklock-watchdog) links nothing else. It
// imports only what the loop needs: a process that starts in a fraction of
// zklock's start-up time, and whose every line a reviewer can read.
package deadman

import (
	"bytes"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Marker is the environment entry that makes a process the watchdog; the
// value names the protocol version, so that a binary of another version
// found on disk mid-upgrade does not take instructions it would misread.
const Marker = "ZKLOCK_INTERNAL_WATCHDOG=1"

// Is reports whether this process was started as a watchdog, or as the
// gate that the watchdog's program also is (gate.go).
func Is() bool {
	if isGate() {
		return true
	}
	v, ok := syscall.Getenv("ZKLOCK_INTERNAL_WATCHDOG")
	return ok && "ZKLOCK_INTERNAL_WATCHDOG="+v == Marker
}

// maxNap bounds each sleep, so that a deadline is checked against the
// shared clock at least this often: after a machine's suspend the
// process's own timers lag the clock that the ZooKeeper servers kept.
const maxNap = time.Second

// raiseAfter is how long the watchdog runs before it raises its priority
// and locks its memory (raise). Locking costs a walk of every mapping, from
// a few hundred microseconds to milliseconds on a busy machine, more than
// the rest of a short run's watchdog: a command that is done by then does
// not pay it, and no deadline falls so soon after a session's last contact
// with the quorum.
const raiseAfter = 50 * time.Millisecond

// Main is the watchdog process: it follows the instructions on standard
// input and returns its exit code. Started as the gate (gate.go), it is
// the gate instead, and returns only if it executes nothing.
//
// It is one goroutine that sleeps in poll(2) on its pipe until a line
// arrives or the next deadline is due, and it allocates nothing once it
// runs: its process starts with the garbage collector off, and no timer,
// channel or goroutine of the runtime's is involved.
func Main() int {
	if isGate() {
		return gate()
	}
	// In a session of its own nothing should signal it, but a stray
	// SIGHUP or SIGINT must not end the switch early.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGPIPE)
	// The loop's thread is raised above the command (priority_*.go)
	// once the watchdog has lived for raiseAfter.
	raiseAt := Now() + int64(raiseAfter)
	raised := false
	var (
		sw  = Switch{Tell: true}
		buf [512]byte // a line is far shorter; a longer one is dropped
		n   int       // bytes of an unfinished line in buf
		fds = []unix.PollFd{{Fd: 0, Events: unix.POLLIN}}
	)
	for {
		now := Now()
		nap := sw.Nap(now)
		if !raised {
			nap = min(nap, max(time.Duration(raiseAt-now), 0))
		}
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
				sw.Handle(buf[:i])
				n = copy(buf[:], buf[i+1:n])
			}
			if n == len(buf) {
				n = 0
			}
		}
		now = Now()
		sw.Check(now)
		if !raised && now >= raiseAt {
			lockThread()
			raise()
			raised = true
		}
	}
}

// Switch is the watchdog's state; times are shared-clock nanoseconds (Now),
// 0 for none.
type Switch struct {
	PGID            int
	StopAt, KillAt  int64
	stopped, killed bool
	// Tell: write a byte on standard output (zklock's report pipe) for
	// each signal sent at a deadline.
	Tell bool
}

// firedByte is what the watchdog writes to say it fired; a global, so
// that the write allocates nothing.
var firedByte = [1]byte{'!'}

// Handle takes one instruction line. It parses in place: the watchdog
// allocates nothing once it runs.
func (s *Switch) Handle(line []byte) {
	verb, rest, _ := bytes.Cut(line, []byte(" "))
	switch string(verb) {
	case "arm":
		if pgid, ok := parseInt(rest); ok {
			s.PGID = int(pgid)
		}
	case "at":
		stop, kill, _ := bytes.Cut(rest, []byte(" "))
		st, ok1 := parseInt(stop)
		k, ok2 := parseInt(kill)
		if ok1 && ok2 {
			s.StopAt, s.KillAt = st, k
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

// Check sends what is due. A signal once sent is never taken back: a
// renewal that arrives after the deadline is a renewal too late.
func (s *Switch) Check(now int64) {
	if s.PGID <= 0 {
		return
	}
	if !s.stopped && s.StopAt > 0 && now >= s.StopAt {
		s.stopped = true
		s.fire(syscall.SIGTERM)
		// A stopped group (Ctrl-Z) keeps SIGTERM pending until continued.
		s.fire(syscall.SIGCONT)
		s.report()
	}
	if !s.killed && s.KillAt > 0 && now >= s.KillAt {
		s.killed = true
		s.fire(syscall.SIGKILL)
		s.report()
	}
}

// Nap is how long to sleep before the next deadline is due. A deadline
// already acted on is due no more: counting it would turn the poll into a
// busy loop until zklock says "ok", a whole CPU for as long as a zklock
// suspended past its deadline stays suspended.
func (s *Switch) Nap(now int64) time.Duration {
	d := maxNap
	if s.PGID <= 0 {
		return d
	}
	if s.StopAt > 0 && !s.stopped {
		d = min(d, max(time.Duration(s.StopAt-now), 0))
	}
	if s.KillAt > 0 && !s.killed {
		d = min(d, max(time.Duration(s.KillAt-now), 0))
	}
	return d
}

// report tells zklock that a deadline passed unrenewed, after the signal:
// zklock reads it only once it runs again.
func (s *Switch) report() {
	if s.Tell {
		_, _ = unix.Write(1, firedByte[:])
	}
}

func (s *Switch) fire(sig syscall.Signal) {
	if s.PGID > 0 {
		_ = unix.Kill(-s.PGID, sig)
	}
}
