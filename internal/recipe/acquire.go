package recipe

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zklock/zklock/zkconn"
)

// Mode is what a request asks to hold: the lock alone (ModeExclusive), a
// share of it with other readers (ModeShared), or one of a semaphore's N
// leases (ModeLimit). The zero Mode is ModeExclusive.
type Mode struct {
	kind  Kind
	limit int // a semaphore's number of leases; 0 for a lock
}

var (
	// ModeExclusive is a mutex, or the write side of a read-write lock.
	ModeExclusive = Mode{kind: Exclusive}
	// ModeShared is the read side of a read-write lock.
	ModeShared = Mode{kind: Shared}
)

// ModeLimit is one of limit leases of a semaphore, laid out as Curator's
// InterProcessSemaphoreV2. A limit below 1 is refused by Acquire.
func ModeLimit(limit int) Mode { return Mode{kind: SemaphoreLease, limit: limit} }

// Kind is the kind of node the mode creates.
func (m Mode) Kind() Kind { return m.kind }

// Limit is the semaphore's number of leases, or 0 for a lock.
func (m Mode) Limit() int { return m.limit }

// Wait is how long Acquire waits for a lock that is not free: not at all
// (NoWait), until a deadline (WaitUntil) or for as long as the context
// lives (WaitForever, the zero Wait). A lock that is free when Acquire
// looks is taken whatever the wait, even past the deadline: a deadline ends
// waiting, never taking.
type Wait struct {
	try      bool
	deadline time.Time // zero: no deadline
}

var (
	// WaitForever waits until the lock is held or the context ends.
	WaitForever = Wait{}
	// NoWait gives up at once, with a *BusyError, if the lock is not free.
	NoWait = Wait{try: true}
)

// WaitUntil waits until the deadline, then gives up with ErrWaitTimeout.
// One deadline can be passed to several Acquire calls so that it bounds
// all of them together.
func WaitUntil(deadline time.Time) Wait { return Wait{deadline: deadline} }

// IsNoWait reports whether the wait gives up at once.
func (w Wait) IsNoWait() bool { return w.try }

// Deadline returns the deadline, if there is one.
func (w Wait) Deadline() (time.Time, bool) { return w.deadline, !w.try && !w.deadline.IsZero() }

// ErrWaitTimeout means a wait passed its deadline before the lock was held.
var ErrWaitTimeout = errors.New("timed out waiting for the lock")

// waitCtx bounds one wait by the deadline. A passed deadline ends the wait
// before it starts.
func (w Wait) waitCtx(ctx context.Context) (context.Context, context.CancelFunc, error) {
	d, ok := w.Deadline()
	if !ok {
		return ctx, func() {}, nil
	}
	if !time.Now().Before(d) {
		return nil, nil, ErrWaitTimeout
	}
	wctx, cancel := context.WithDeadlineCause(ctx, d, ErrWaitTimeout)
	return wctx, cancel, nil
}

// waitErr turns the end of a bounded wait into ErrWaitTimeout.
func waitErr(wctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(wctx), ErrWaitTimeout) {
		return ErrWaitTimeout
	}
	return err
}

// Request says what Acquire should take and how.
type Request struct {
	Mode Mode
	// Flavor picks the node names: FlavorCurator (the default, also for
	// ""), FlavorCuratorRW or FlavorKazoo, so that clients of those
	// libraries see zklock. A semaphore always uses Curator's names.
	Flavor Flavor
	Wait   Wait
	// Data is written into our contender node, for other contenders and
	// people to read (see declared for the part the recipes read).
	Data []byte
	// OnQueued, if set, is called once per Acquire, as soon as this
	// contender's node exists in the queue: its create was answered, or,
	// the answer lost, the node was found (the session then owns a place
	// that others wait behind). For a semaphore it is the node in the
	// queue for the semaphore's mutex. A NoWait request that finds the
	// lock busy has been queued too, and deletes its node again. OnQueued
	// runs on the acquisition's path: it must return at once.
	OnQueued func()
	// OnWait, if set, is called each time Acquire starts waiting. It runs
	// on the acquisition's path: it must return at once.
	OnWait func(Waiting)
	// OnNext, if set, is called once per Acquire, as soon as this
	// contender is next in line: the lock is free to take now, or every
	// contender it waits for holds the lock, so that the release that
	// wakes it hands the lock to it. For a mutex or a writer that is the
	// moment its predecessor is the holder; for a reader, the moment the
	// writer it waits for is; for a semaphore's lease, the moment its
	// contender holds the semaphore's mutex (it then waits only for one of
	// the leases to be released). A contender further back learns that it
	// is next only when it holds: it watches its predecessor alone, and
	// hears nothing when the contenders ahead of that one leave. A
	// NoWait request that finds the lock busy is never next. OnNext runs
	// on the acquisition's path: it must return at once.
	OnNext func()
	// Supersede, if set, joins a superseding queue (supersede.go): at
	// most one waiter, the newest or the one with the highest key. Only
	// an exclusive lock supersedes; every contender of the path must ask
	// for it.
	Supersede *Supersede
}

// nextOnce makes r.OnNext fire at most once for one Acquire.
func (r *Request) nextOnce() {
	if f := r.OnNext; f != nil {
		var once sync.Once
		r.OnNext = func() { once.Do(f) }
	}
}

// next tells the caller that this contender is next in line (OnNext).
func (r *Request) next() {
	if r.OnNext != nil {
		r.OnNext()
	}
}

// Waiting is where a waiting contender stands, each time it starts waiting.
type Waiting struct {
	Position int       // our 1-based place in the queue
	Ahead    Contender // the contender we wait for
	// Holder is the node of the lock's first holder, to read who it is;
	// "" while a semaphore's contender waits for its mutex, whose holder
	// is not one of the semaphore's.
	Holder string
	// Node is our own node.
	Node string
}

// Acquire takes what r asks for at path and returns once it is held, ctx
// is done, or the wait has ended (a *BusyError for NoWait, ErrWaitTimeout
// past a deadline). On every failure after joining it deletes its nodes
// before returning, so nothing is left behind. A mutex and a semaphore
// look alike to the caller: the Lease releases either.
func Acquire(ctx context.Context, c *zkconn.Client, path string, r Request) (*Lease, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	r.nextOnce()
	if r.Supersede != nil && (r.Mode.kind != Exclusive || r.Wait.try) {
		return nil, errSupersedeMode
	}
	if r.Mode.kind == SemaphoreLease {
		return acquireSemaphore(ctx, c, path, r)
	}
	return acquireMutex(ctx, c, path, r)
}
