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

// Events is told what a run does, as it happens: cmd renders each event
// as a line of text, a JSON object, systemd's status or a metric. Event is
// called from several of the run's goroutines (the acquisition, the wait's
// status, the guard, the command's supervisor), so an implementation
// serializes what it writes. It is called synchronously and must return
// soon: a call from the supervisor is made with SIGTTOU blocked on its
// thread, so that a write to a terminal the command owns goes through
// rather than stopping zklock under `stty tostop`.
type Events interface {
	Event(Event)
}

// Event is one of the types below, and WaitStatus.
type Event interface{ isEvent() }

// WaitOver says that the wait has ended: the locks are held, or zklock is
// about to say why not. Waited is how long it waited, from joining the
// first queue; zero if it never joined one.
type WaitOver struct {
	Waited time.Duration
}

// Acquired says that one lock is held: taken (Node is ours) or re-entered
// (Node is the ancestor zklock's, and so are Session and FencingToken).
type Acquired struct {
	Path, Node   string
	Session      int64
	FencingToken int64
	// Wait is how long this path took, from joining its queue.
	Wait      time.Duration
	Reentered bool
	// Resource is the pool member the lock is, "" outside a pool.
	Resource string
}

// Busy says that tryrun (or run with --timeout 0) found a lock taken.
type Busy struct{ *recipe.BusyError }

// Skipped says that --once-per did not run the command: it succeeded
// within the window, or the clocks that dated the success disagree.
type Skipped struct{ *RecentSuccessError }

// Superseded says that a waiter left its queue without running the
// command: a newer run (--supersede) took its place.
type Superseded struct{ *recipe.SupersededError }

// Outdated says that the command was not run: a run with a higher order
// key already succeeded under the lock.
type Outdated struct{ *OutdatedError }

// Lost says that the locks can no longer be trusted while the command
// runs (see guard.go); the supervisor has been told first. Path is the
// first lock path; QuorumHeardAge is how long ago the quorum last
// confirmed the session.
type Lost struct {
	Path           string
	Err            error
	QuorumHeardAge time.Duration
}

// Revoked says that someone asked for a lock to be given up: the holder's
// command (each request, under --on-revoke ignore), or a waiter, which
// leaves the queue.
type Revoked struct{ *recipe.RevokedError }

// Started says that the command is running, as process PID.
type Started struct{ PID int }

// Released says that the locks held are given back, all at once: the
// session that held them is closed (Confirmed), or could not be confirmed
// closed, in which case the server drops the nodes when the session
// expires. Hold is how long they were held, from the first one taken.
type Released struct {
	Paths     []string
	Hold      time.Duration
	Confirmed bool
	// How says how, in a few words: "session closed", "the session had
	// expired"; empty when not confirmed.
	How string
}

func (WaitStatus) isEvent() {}
func (WaitOver) isEvent()   {}
func (Acquired) isEvent()   {}
func (Busy) isEvent()       {}
func (Skipped) isEvent()    {}
func (Superseded) isEvent() {}
func (Outdated) isEvent()   {}
func (Lost) isEvent()       {}
func (Revoked) isEvent()    {}
func (Started) isEvent()    {}
func (Released) isEvent()   {}

// emit hands e to Events, if any.
func (o *Options) emit(e Event) {
	if o.Events != nil {
		o.Events.Event(e)
	}
}

// reportOutcome turns what ended a run without the command (a busy lock,
// a success within the window, a newer run's place taken or its key
// recorded, a revoked waiter) into its event, once: Run
// calls it before the release, and again on its way out, for an end
// decided before anything was held. It reads the run's error, so that
// every way to such an end is reported, wherever it was decided.
func (o *Options) reportOutcome(err error) {
	var (
		busy       *recipe.BusyError
		recent     *RecentSuccessError
		superseded *recipe.SupersededError
		outdated   *OutdatedError
		revoked    *recipe.RevokedError
	)
	if o.reported {
		return
	}
	o.reported = true
	switch {
	case err == nil || o.Events == nil:
	case errors.As(err, &busy):
		o.emit(Busy{busy})
	case errors.As(err, &recent):
		o.emit(Skipped{recent})
	case errors.As(err, &superseded):
		o.emit(Superseded{superseded})
	case errors.As(err, &outdated):
		o.emit(Outdated{outdated})
	case errors.As(err, &revoked) && !errors.Is(err, lockexec.ErrLockRevoked):
		// A waiter revoked; a holder's requests are reported as they
		// come (see revocations).
		o.emit(Revoked{revoked})
	}
}

// reportLoss emits the guard's loss report, then passes it on to the
// supervisor. The event is one line, written as the supervisor's own
// warning about the loss is, before the supervisor stops the command: it
// comes first, and it is out before Run returns. A loss that the watchdog
// acted on first (zklock was stopped or starved) is named for it (see
// watchdogFirst), in the event and for the supervisor. The probe looks
// at the command before the loss is passed on, that is before zklock's
// own kill (late.go). The goroutine ends with the first report or with
// ctx.
func (o *Options) reportLoss(ctx context.Context, c *zkconn.Client, lost <-chan error, wd *lockexec.Watchdog, probe *lateProbe) <-chan error {
	if lost == nil {
		return nil
	}
	out := make(chan error, 1)
	go func() {
		select {
		case err := <-lost:
			probe.look() // before the kill it leads to (late.go)
			err = watchdogFirst(err, wd)
			if o.Events != nil {
				lockexec.WithoutSIGTTOU(func() { o.lostOnce(c, err) })
			}
			out <- err
		case <-ctx.Done():
		}
	}()
	return out
}

// watchdogFirst wraps a loss in lockexec.ErrUnrenewed when the watchdog
// has already signalled the command: the guard, stopped or starved with
// zklock, saw the loss only after the watchdog had acted on it. The guard's
// cause stays inside it, and with it how soon the command must be dead.
func watchdogFirst(err error, wd *lockexec.Watchdog) error {
	if !wd.Fired() {
		return err
	}
	if err == nil {
		return lockexec.ErrUnrenewed
	}
	return fmt.Errorf("%w (%w)", lockexec.ErrUnrenewed, err)
}

// reportLostBy emits Lost for a command stopped as the lock was lost
// that the guard did not report first: the watchdog, which enforces the
// same deadline from outside, got there before it.
func (o *Options) reportLostBy(c *zkconn.Client, err error) {
	var term *lockexec.TerminatedError
	if o.Events != nil && errors.As(err, &term) && errors.Is(term.Reason, lockexec.ErrLockLost) {
		o.lostOnce(c, term.Cause)
	}
}

// lostOnce emits the one Lost of a run; a second report waits for the
// first to be out, and is dropped.
func (o *Options) lostOnce(c *zkconn.Client, err error) {
	o.lost.Do(func() {
		o.emit(Lost{Path: o.Paths[0], Err: err, QuorumHeardAge: time.Since(c.QuorumHeard())})
	})
}

// reportAcquired emits one Acquired for a lock taken.
func (o *Options) reportAcquired(ctx context.Context, c *zkconn.Client, l *recipe.Lease, wait time.Duration, resource string) {
	if o.Events == nil {
		return
	}
	// The token is the node's creation zxid, known from the create's
	// reply: no request.
	token, _ := l.FencingToken(ctx)
	o.emit(Acquired{Path: l.Path, Node: l.Node, Session: c.SessionID(), FencingToken: token, Wait: wait, Resource: resource})
}

// reportReentered emits one Acquired for each lock re-entered.
func (o *Options) reportReentered(in []inherited) {
	for _, h := range in {
		o.emit(Acquired{Path: h.Path(), Node: h.Node, Session: h.Session, FencingToken: h.Token, Reentered: true})
	}
}

// reportRelease emits Released for the paths given back.
func (o *Options) reportRelease(paths []string, confirmed bool, how string) {
	var hold time.Duration
	if !o.heldSince.IsZero() {
		hold = time.Since(o.heldSince)
	}
	o.emit(Released{Paths: paths, Hold: hold, Confirmed: confirmed, How: how})
}
