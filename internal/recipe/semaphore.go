package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// Semaphore paths, as Curator's InterProcessSemaphoreV2 lays them out.
const (
	semLocks  = "locks"  // a mutex that serializes lease creation
	semLeases = "leases" // one ephemeral-sequential node per lease
)

// SemaphoreLeases is the node whose children are the leases of a semaphore
// at path: where its holders are, if path is a semaphore's.
func SemaphoreLeases(path string) string { return zkconn.Join(path, semLeases) }

// The names of a semaphore's two nodes below its path: its leases, and
// the mutex that those waiting for a lease queue in.
const (
	SemaphoreLeasesName = semLeases
	SemaphoreMutexName  = semLocks
)

// acquireSemaphore takes one of limit leases on path, with the layout of
// Curator's InterProcessSemaphoreV2, so zklock and Java services share
// semaphores:
//
//  1. take the mutex <path>/locks (the herd-free recipe above);
//  2. create our lease <path>/leases/_c_<uuid>-lease-<seq>;
//  3. list the leases with a child watch; with at most limit leases we
//     hold one, otherwise wait for the watch (a holder left) and list again;
//  4. release the mutex.
//
// Only the mutex holder ever watches the leases, and everyone else waits
// in the mutex's queue watching one predecessor: a release wakes one
// process. Holders leave in any order, which is why "watch the node limit
// places ahead" would be wrong and this layout is used instead.
//
// zklock writes the limit into its lease data; a zklock lease with another
// limit makes this fail with ErrLimitMismatch (Curator's leases carry no
// limit, so a disagreement with them cannot be seen).
func acquireSemaphore(ctx context.Context, c *zkconn.Client, path string, r Request) (*Lease, error) {
	limit := r.Mode.limit
	if limit < 1 {
		return nil, fmt.Errorf("%w: the limit must be at least 1", ErrLimitMismatch)
	}
	// One recipe per path: refuse at once if lock contenders are there,
	// and look again once our own node exists (below), so that of a lock
	// and a semaphore arriving together the later one sees the earlier.
	if err := checkNoLocks(ctx, c, path); err != nil {
		return nil, err
	}
	mr := Request{Data: r.Data, Wait: r.Wait, OnQueued: r.OnQueued}
	if r.OnWait != nil {
		mr.OnWait = func(w Waiting) {
			w.Holder = "" // the mutex's holder waits for a lease too
			r.OnWait(w)
		}
	}
	mutex, err := acquireMutex(ctx, c, zkconn.Join(path, semLocks), mr)
	if errors.As(err, new(*BusyError)) {
		// Someone holds the mutex: either creating a lease right now, or
		// waiting for one because all are taken. Either way, not free now.
		return nil, semaphoreBusy(ctx, c, path, limit)
	}
	if err != nil {
		return nil, err
	}
	defer mutex.cleanup()
	if err := checkNoLocks(ctx, c, path); err != nil {
		return nil, err
	}

	leases := zkconn.Join(path, semLeases)
	node, err := createProtected(ctx, c, leases, nodeStem(FlavorCurator, SemaphoreLease), r.Data)
	if err != nil {
		return nil, err
	}
	// A lease whose creator first waited for the mutex was not taken on
	// joining either: its creation time is not when it was taken.
	l := &Lease{c: c, Path: path, Node: node, Mode: r.Mode, waited: mutex.waited}
	if err := l.waitLease(ctx, limit, r); err != nil {
		l.cleanup()
		return nil, err
	}
	return l, nil
}

func (l *Lease) waitLease(ctx context.Context, limit int, r Request) error {
	leases := zkconn.Join(l.Path, semLeases)
	var busy *BusyError // from the first listing's scan; nil until then
	for {
		var children []string
		q, _, ev, err := l.position(ctx, func() ([]string, <-chan zk.Event, error) {
			var ev <-chan zk.Event
			var err error
			children, ev, err = l.c.ChildrenW(ctx, leases)
			return children, ev, err
		})
		if err != nil {
			return err
		}
		if err := l.checkRevoked(ctx); err != nil {
			return err
		}
		if busy == nil {
			if busy, err = scanLeases(ctx, l.c, l.Path, q, l.name(), limit); err != nil {
				return err
			}
		}
		// Curator's rule: hold a lease once there are at most limit of
		// them. With lease creation serialized by the mutex, the only lease
		// that is not a holder is ours.
		if len(children) <= limit {
			r.next()
			return nil
		}
		if r.Wait.try {
			return busy
		}
		// We hold the mutex, so ours is the only lease that does not hold
		// one: the next lease released is ours.
		r.next()
		if r.OnWait != nil {
			r.OnWait(Waiting{Position: len(children), Ahead: q[0], Holder: zkconn.Join(leases, q[0].Name), Node: l.Node})
		}
		l.waited = true
		if err := l.watchOwnLease(ctx); err != nil {
			return err
		}
		if err := l.awaitLeases(ctx, r.Wait, ev); err != nil {
			return err
		}
	}
}

// watchOwnLease sets a data watch on our lease while it waits for a free
// one, unless one is set: a revocation (Curator's request written into the
// lease, see Revoke) must make the waiter leave at once, not when a lease
// frees up, since it holds the semaphore's mutex and so blocks the whole
// queue behind it.
func (l *Lease) watchOwnLease(ctx context.Context) error {
	if l.own != nil {
		return nil
	}
	data, st, ch, err := l.c.GetW(ctx, l.Node)
	stop, readErr := l.takeOwnWatch(ctx, data, st, ch, err)
	switch {
	case stop != nil:
		return stop
	case readErr != nil && zkconn.IsConnectionLoss(readErr):
		// Not watched this time: the next listing tries again.
		return nil
	}
	return readErr
}

// awaitLeases waits for the leases' child watch, bounded by the wait's
// deadline.
func (l *Lease) awaitLeases(ctx context.Context, w Wait, ev <-chan zk.Event) error {
	wctx, cancel, err := w.waitCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	select {
	case <-ev:
		return nil
	case e := <-l.own:
		// Our lease's data changed (a revocation?) or it was deleted:
		// the next listing and checkRevoked tell which.
		l.ownEvent(e)
		return nil
	case <-l.c.Lost():
		return l.c.LostErr()
	case <-wctx.Done():
		return waitErr(wctx, wctx.Err())
	}
}

// scanLeases reads the data of the leases in q, except ours (skip): a
// zklock lease that declares another limit is a mismatch; otherwise the
// result describes the first lease's holder, should the semaphore be full.
func scanLeases(ctx context.Context, c *zkconn.Client, path string, q []Contender, skip string, limit int) (*BusyError, error) {
	e := &BusyError{Path: path, Limit: limit}
	leases := zkconn.Join(path, semLeases)
	for i, ct := range q {
		if ct.Name == skip {
			continue
		}
		data, _, err := c.Get(ctx, zkconn.Join(leases, ct.Name))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if d, ok := declaration(data); ok && d.Limit != 0 && d.Limit != limit {
			return nil, &LimitMismatchError{Path: path, Held: d.Limit, Holder: ct, Data: data, Want: limit}
		}
		if i == 0 {
			e.Holder, e.Data = ct, data
		}
	}
	return e, nil
}

// semaphoreBusy answers a try whose semaphore mutex is taken: a limit
// mismatch if the holders declared another limit, else busy.
func semaphoreBusy(ctx context.Context, c *zkconn.Client, path string, limit int) error {
	children, err := c.Children(ctx, zkconn.Join(path, semLeases))
	if err == nil {
		busy, err := scanLeases(ctx, c, path, Contenders(children), "", limit)
		if errors.Is(err, ErrLimitMismatch) {
			return err
		}
		if busy != nil {
			return busy
		}
	}
	return &BusyError{Path: path, Limit: limit}
}
