package runner

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zklock/zklock/lockexec"
)

// The lock's safety rests on one assumption about time: the command's
// process group is dead before the leader can expire the session, which
// is no earlier than QuorumHeard + T. The budget (budget.go) plans for
// it, and the watchdog enforces it should zklock stop running. On a
// starved host all three (zklock, its watchdog, the kernel tearing the
// processes down) can be late. zklock cannot prevent that, but it can
// prove it afterwards: a probe looks at the command's group once the
// session could have expired, and a process of it still running then,
// on zklock's monotonic clock, is a command that may have run beside
// the next holder. That is reported as a possible overlap with the
// lateness measured, never as a clean loss: what the fencing token
// protects is then the only guarantee left.
//
// The probe proves lateness; it never guesses it. A group found dead
// (zombies count as dead: they run nothing) proves nothing late, even
// when zklock itself was stopped past the expiry, since its watchdog
// may have killed the command on time; zklock has no record of when.

// OverlapError is a lost lock whose command was seen running after its
// session could have expired: the next holder may have run beside it. It
// wraps the loss (errors.Is(err, lockexec.ErrLockLost) holds).
type OverlapError struct {
	// Late is how long after the earliest possible expiry a process of
	// the command's group was last seen running: the two holders may
	// have overlapped for at least that long.
	Late time.Duration
	// Timeout is the session timeout that the expiry counted with.
	Timeout time.Duration
	Err     error
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("possible overlap: the command still ran %s after its session could have expired (session timeout %s); %v",
		e.Late.Round(time.Millisecond), e.Timeout, e.Err)
}

func (e *OverlapError) Unwrap() error { return e.Err }

// PossibleOverlap says that a lost lock's command was seen running after
// its session could have expired (see OverlapError).
type PossibleOverlap struct {
	Path string
	*OverlapError
}

func (PossibleOverlap) isEvent() {}

// latePoll is how often the probe looks again at a group it found
// running past the expiry: the precision of the lateness it reports.
const latePoll = 10 * time.Millisecond

// lateSeen is what the probe saw: the last moment a process of the
// command's group ran past the session's earliest expiry, and that
// expiry (both zero if none was seen).
type lateSeen struct {
	alive, expiry time.Time
	timeout       time.Duration
}

// late is the lateness seen, zero if none.
func (l lateSeen) late() time.Duration {
	if l.alive.IsZero() {
		return 0
	}
	return l.alive.Sub(l.expiry)
}

// lateProbe watches the command's group (its pid, once started) against
// the session's earliest expiry, QuorumHeard + T, which it follows as the
// guard does: every confirmation moves it, so in a healthy run the
// probe's timer never fires. Once the expiry has passed, a running
// process of the group is proof of a kill come late; the probe then
// looks every latePoll until the group is gone. The guard's loss is
// looked at too, before it reaches the supervisor (see reportLoss): a
// zklock continued after a stop past the expiry sends its SIGKILL at
// once, which could otherwise beat the probe's own look.
type lateProbe struct {
	src   contactSource
	alive func(pgid int) bool

	mu   sync.Mutex
	pid  int // the command's group; 0 until it started
	seen lateSeen
}

func newLateProbe(src contactSource, alive func(pgid int) bool) *lateProbe {
	return &lateProbe{src: src, alive: alive}
}

// started gives the probe the command's group.
func (p *lateProbe) started(pid int) {
	p.mu.Lock()
	p.pid = pid
	p.mu.Unlock()
}

// look checks the group now. It returns how long to wait before the next
// look (until the expiry, or latePoll past it), and false once nothing
// more can be seen: the group was found gone past the expiry.
func (p *lateProbe) look() (wait time.Duration, more bool) {
	ct := p.src.Contact()
	expiry := ct.QuorumHeard.Add(ct.Timeout)
	if wait := time.Until(expiry); ct.QuorumHeard.IsZero() || wait > 0 {
		return max(wait, latePoll), true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid == 0 {
		return latePoll, true
	}
	if !p.alive(p.pid) {
		return 0, false
	}
	p.seen = lateSeen{alive: time.Now(), expiry: expiry, timeout: ct.Timeout}
	return latePoll, true
}

// run looks until stop is closed, or until the group is found gone past
// the expiry. Its caller owns it: it ends with stop.
func (p *lateProbe) run(stop <-chan struct{}) {
	for {
		changed := p.src.ContactChanged()
		wait, more := p.look()
		if !more {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-stop:
			t.Stop()
			return
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// watch runs the probe in a goroutine; the function it returns ends it
// and returns what it saw.
func (p *lateProbe) watch() (stop func() lateSeen) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(quit)
	}()
	return func() lateSeen {
		close(quit)
		<-done
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.seen
	}
}

// lateKill turns a loss into an *OverlapError when the probe saw the
// command run past the session's earliest expiry; any other outcome, or
// a loss killed in time, comes back unchanged. Only a command stopped for
// a loss counts: one that ended by itself, or under --on-lost ignore,
// was not zklock's to stop.
func lateKill(err error, seen lateSeen) error {
	var term *lockexec.TerminatedError
	if !errors.As(err, &term) || !errors.Is(term.Reason, lockexec.ErrLockLost) || seen.late() <= 0 {
		return err
	}
	return &OverlapError{Late: seen.late(), Timeout: seen.timeout, Err: err}
}

// reportLate is lateKill on the run's outcome, with its event.
func (o *Options) reportLate(err error, seen lateSeen) error {
	err = lateKill(err, seen)
	var late *OverlapError
	if errors.As(err, &late) {
		o.emit(PossibleOverlap{Path: o.Paths[0], OverlapError: late})
	}
	return err
}
