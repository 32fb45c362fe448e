package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/lockexec"
	"github.com/zklock/zklock/zkconn"
)

// ErrNoContact means the ensemble has not confirmed the session for so
// long that it could expire before a command could be stopped.
var ErrNoContact = errors.New("no contact with the ZooKeeper quorum")

// NoContactError is ErrNoContact with the numbers: how long the quorum has
// been silent, under which session timeout, and by when the command must
// be dead.
type NoContactError struct {
	Silence time.Duration
	Timeout time.Duration
	Kill    time.Time
}

func (e *NoContactError) Error() string {
	return fmt.Sprintf("%v for %s (session timeout %s): the session may expire before the command could be stopped",
		ErrNoContact, e.Silence.Round(10*time.Millisecond), e.Timeout)
}

func (e *NoContactError) Unwrap() error { return ErrNoContact }

// KillBy is when the command must be dead: lockexec shortens its grace to
// fit (a timeout that shrank can leave less than the usual grace).
func (e *NoContactError) KillBy() time.Time { return e.Kill }

// Urgency is WithGrace: a loss for lack of contact is foreseen, not yet
// happened. The budget stops the command before the leader could expire
// the session, so the lock is still ours during the grace.
func (e *NoContactError) Urgency() lockexec.Urgency { return lockexec.WithGrace }

// lossError is a lease's loss (or a re-entered node's): the loss is
// certain, not foreseen. The node is gone (deleted, or with its session),
// the session expired, or the ensemble no longer knows it: the next
// waiter may already hold the lock, so the command gets no grace.
type lossError struct{ err error }

func (e *lossError) Error() string { return e.err.Error() }
func (e *lossError) Unwrap() error { return e.err }

// Urgency is AtOnce: the lock may already be someone else's.
func (e *lossError) Urgency() lockexec.Urgency { return lockexec.AtOnce }

// contactSource is what the guard reads of the session: a *zkconn.Client.
type contactSource interface {
	Contact() zkconn.Contact
	ContactChanged() <-chan struct{}
}

// clock is the guard's time, which its tests replace.
type clock interface {
	Now() time.Time
	// Timer fires once, d from now; stop ends it.
	Timer(d time.Duration) (fire <-chan time.Time, stop func())
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// guard watches the locks one session holds while the command runs, and
// returns, once, the first reason to treat them as lost:
//
//   - a lease's Done: its node was deleted, or its session lost (expired,
//     replaced, refused, or the ensemble lost its state). The loss is
//     certain, and the command is killed at once (lossError);
//   - the budget's Deadline has passed since the client's QuorumHeard: the
//     ensemble has not confirmed the session for so long that the command
//     must be stopped now to be dead before the leader could expire it.
//
// The deadlines follow every change of the session's Contact as it
// happens (pushed by zkconn, never polled): each confirmation from the
// quorum moves them, and each reconnect may change the session timeout
// that they count with. A timeout that shrank can put the deadline in the
// past; the command is then stopped at once. Each new pair of moments is
// passed to renew (when set) so that a watchdog outside this process can
// enforce them if this process stops running (see lockexec.Watchdog):
// every confirmation renews it, before the guard looks at its timer.
type guard struct {
	src       contactSource
	clock     clock
	killGrace time.Duration
	renew     func(stop, kill time.Time) // nil: nothing to renew
	logf      func(format string, args ...any)
}

// watch runs the guard until ctx ends or a loss is found, which it
// returns (nil if ctx ended first). gone carries the leases' losses.
func (g *guard) watch(ctx context.Context, gone <-chan error) error {
	var (
		last               zkconn.Contact
		budget             Budget
		sentStop, sentKill time.Time
		fire               <-chan time.Time
		stopTimer          = func() {}
	)
	defer func() { stopTimer() }()
	for first := true; ; first = false {
		changed := g.src.ContactChanged()
		ct := g.src.Contact()
		if first || ct.Timeout != last.Timeout || ct.Granted != last.Granted || ct.Pending != last.Pending {
			budget = NewBudget(ct.Timeout, g.killGrace)
			switch {
			case first:
				g.sayBudget("session timeout %s", budget)
			case ct.Timeout != last.Timeout:
				g.sayBudget("session timeout now %s", budget)
			}
			g.sayGranted(ct, budget)
		}
		last = ct
		stop, kill := budget.Stop(ct.QuorumHeard), budget.Kill(ct.QuorumHeard)
		if wdStop, wdKill := budget.WatchdogStop(ct.QuorumHeard), budget.WatchdogKill(ct.QuorumHeard); g.renew != nil && (!wdStop.Equal(sentStop) || !wdKill.Equal(sentKill)) {
			g.renew(wdStop, wdKill)
			sentStop, sentKill = wdStop, wdKill
		}
		now := g.clock.Now()
		if !now.Before(stop) {
			return &NoContactError{Silence: now.Sub(ct.QuorumHeard), Timeout: budget.Timeout, Kill: kill}
		}
		stopTimer()
		fire, stopTimer = g.clock.Timer(stop.Sub(now))
		select {
		case <-ctx.Done():
			return nil
		case err := <-gone:
			return &lossError{err: err}
		case <-changed:
		case <-fire:
			// Look again: a confirmation that came with the timer
			// moves the deadline (and renews the watchdog) rather than
			// counting as silence.
		}
	}
}

// sayBudget tells -v how the session timeout is spent: at the start, and
// each time the timeout changes (a reconnect granted the one in effect
// leaves the budget as it was, so it is not said again).
func (g *guard) sayBudget(what string, b Budget) {
	if g.logf == nil {
		return
	}
	g.logf(what+"; if the ensemble does not confirm the session for %s the command is stopped (SIGTERM, then SIGKILL %s later), %s before the session could expire",
		b.Timeout, b.Deadline, b.Grace, b.Left())
}

// sayGranted tells -v why a timeout the server granted is not the one
// the deadlines count with.
func (g *guard) sayGranted(ct zkconn.Contact, b Budget) {
	if g.logf == nil {
		return
	}
	switch {
	case ct.Pending > 0:
		g.logf("the server granted %s on reconnecting; %s counts until the quorum confirms it", ct.Granted, b.Timeout)
	case ct.Granted > b.Timeout:
		g.logf("the server granted %s on reconnecting; %s still counts: a newly elected leader goes back to the timeout the session was created with", ct.Granted, b.Timeout)
	}
}

// guardLeases runs g over leases (and the re-entered nodes' losses in
// inherited, which may be nil) and reports the first loss on the returned
// channel. Its goroutines end with ctx.
func guardLeases(ctx context.Context, g *guard, leases []*recipe.Lease, inherited <-chan error) <-chan error {
	gone := make(chan error, len(leases)+1)
	for _, l := range leases {
		go func() {
			select {
			case <-l.Done():
				gone <- l.Err()
			case <-ctx.Done():
			}
		}()
	}
	if inherited != nil {
		go func() {
			select {
			case err := <-inherited:
				gone <- err
			case <-ctx.Done():
			}
		}()
	}
	lost := make(chan error, 1)
	go func() {
		if err := g.watch(ctx, gone); err != nil {
			lost <- err
		}
	}()
	return lost
}
