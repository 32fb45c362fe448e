package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/recipe"
	"github.com/zklock/zklock/zkconn"
)

// Request says what Acquire should take and how. The zero Request waits,
// for as long as the context lives, to hold the lock alone.
type Request struct {
	Mode   Mode
	Flavor Flavor
	Wait   Wait
	// Data is written into the contender's node, for other contenders and
	// people to read (Inspect). Curator writes the client's address there,
	// zklock a JSON record of who it is.
	Data []byte
}

// Lease is a held lock. It lives as long as its session and its node:
// Done and Err say when it can no longer be trusted.
type Lease struct {
	l *recipe.Lease

	revokedOnce sync.Once
	revoked     chan *RevokedError
}

// Acquire joins the queue at path and waits, as r.Wait says, until it
// holds what r.Mode asks for. On any failure it has left the queue again.
func Acquire(ctx context.Context, c *zkconn.Client, path string, r Request) (*Lease, error) {
	if r.Mode.kind == semaphore && r.Mode.Limit() < 1 {
		return nil, fmt.Errorf("%w: a semaphore's limit must be at least 1, not %d", ErrBadRequest, r.Mode.Limit())
	}
	l, err := recipe.Acquire(ctx, c, path, recipe.Request{Mode: r.Mode.recipe(), Flavor: r.Flavor.recipe(), Wait: r.Wait.recipe(), Data: r.Data})
	if err != nil {
		return nil, public(err)
	}
	return &Lease{l: l}, nil
}

// Path is the lock path.
func (l *Lease) Path() string { return l.l.Path }

// Node is the lease's node: the one a fencing token and Revoke name.
func (l *Lease) Node() string { return l.l.Node }

// Mode is what the lease holds.
func (l *Lease) Mode() Mode { return modeOf(l.l.Mode) }

// Done is closed once the lease can no longer be trusted: its node was
// deleted (Err is ErrNodeGone), its session was lost (zkconn.IsSessionLoss
// of Err), or it was released (ErrReleased). A session merely cut off from
// the ensemble may come back, and Done stays open meanwhile. The first call
// to Done, Err or Revoked sets a watch on the node: one request.
func (l *Lease) Done() <-chan struct{} { return l.l.Done() }

// Err is nil while Done is open, and why it was closed once it is.
func (l *Lease) Err() error { return public(l.l.Err()) }

// Revoked delivers each request, written while the lease is held, that
// it give the lock up (see Revoke). The lease is still held: the holder
// decides. A request is dropped while the one before it is unread.
func (l *Lease) Revoked() <-chan *RevokedError {
	l.revokedOnce.Do(func() {
		l.revoked = make(chan *RevokedError, 1)
		in, done := l.l.Revoked(), l.l.Done()
		// The lease owns this goroutine: it ends with the lease's watch,
		// which Release ends.
		go func() {
			for {
				select {
				case <-done:
					return
				case r := <-in:
					select {
					case l.revoked <- revoked(r, r):
					default:
					}
				}
			}
		}()
	})
	return l.revoked
}

// FencingToken is the node's creation zxid. It grows strictly from each
// holder of a path to the next: pass it to what the lock protects, so
// that it refuses a holder older than one it has seen.
func (l *Lease) FencingToken(ctx context.Context) (int64, error) {
	t, err := l.l.FencingToken(ctx)
	return t, public(err)
}

// Verify checks with one request that the node still exists, is this
// session's and was not asked to give up its place (a *RevokedError).
func (l *Lease) Verify(ctx context.Context) error { return public(l.l.Verify(ctx)) }

// Release deletes the node and ends the lease; the next waiter's watch
// fires. A node already gone counts as released.
func (l *Lease) Release(ctx context.Context) error { return public(l.l.Release(ctx)) }

// Leases are locks on several paths, held together, in the order taken.
type Leases []*Lease

// AcquireAll takes r on every path, in sorted order so that two callers
// asking for the same paths cannot each hold one and wait for the other
// (as Curator's InterProcessMultiLock). A WaitUntil deadline is one for
// all the paths. Once it holds the last one it verifies the first ones,
// held while it waited; on any failure it has released what it held.
func AcquireAll(ctx context.Context, c *zkconn.Client, paths []string, r Request) (Leases, error) {
	paths = slices.Clone(paths)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var ls Leases
	for _, p := range paths {
		l, err := Acquire(ctx, c, p, r)
		if err != nil {
			ls.backOut(ctx)
			return nil, err
		}
		ls = append(ls, l)
	}
	inner := make([]*recipe.Lease, len(ls))
	for i, l := range ls {
		inner[i] = l.l
	}
	if err := recipe.VerifyAll(ctx, inner); err != nil {
		ls.backOut(ctx)
		return nil, public(err)
	}
	return ls, nil
}

// releaseTimeout bounds the releases of a failed AcquireAll, whose context
// may be over: past a session timeout or so the session is in trouble, and
// its end deletes the nodes anyway.
const releaseTimeout = 10 * time.Second

func (ls Leases) backOut(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	_ = ls.Release(ctx) // the acquisition's error is the one to report
}

// Release releases every lease, the last taken first, and returns their
// errors joined.
func (ls Leases) Release(ctx context.Context) error {
	var errs []error
	for _, l := range slices.Backward(ls) {
		errs = append(errs, l.Release(ctx))
	}
	return errors.Join(errs...)
}
