package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// A pool is a set of named members under one path, such as a staging pool
// <path>/env-a, <path>/env-b, <path>/env-c. Each member is an ordinary
// mutex at <path>/<member>, so list, holders, revoke and a Curator client
// on a member's path see a plain lock and its holder.
//
// Contenders for the pool line up in one FIFO queue, a mutex at
// <path>/_queue. Only the head of that queue takes members: it tries each
// member it listed, without waiting, until it holds as many as it asked
// for, and leaves the queue only then. So a job that asked first gets the
// next free member, and two jobs that each want several members never hold
// partial sets that wait on each other: only one of them collects at a
// time. While the head lacks members it watches the child lists of the
// members it could not take, and nothing else; everyone behind it watches
// its predecessor in the queue, as in any mutex. A release therefore wakes
// one pool contender, whatever the size of the queue.
//
// The members are the operator's choice: a member is a name under the
// path, and contenders may list different ones. The queue stays one queue:
// a contender waits behind every earlier contender of the pool, also one
// that wants only members it did not list (first come, first served over
// the whole pool, never overtaking).

// PoolQueueName is the child of a pool's path that its contenders queue
// in. It cannot be a member's name.
const PoolQueueName = "_queue"

// Pool asks for Take of the named Members of a pool.
type Pool struct {
	Members []string
	Take    int
}

// ErrBadPool is what every error of Pool.Validate is.
var ErrBadPool = errors.New("bad pool")

// Validate checks that every member is a node name that can stand under
// the pool's path, that none is listed twice, and that Take is between 1
// and the number of members.
//
// A member's node is a child of the pool path, beside the nodes of any
// lock taken on the pool path itself, so a name that readers of that path
// would misread is refused, as ValidatePath refuses such a component: one
// in a contender's shape (Curator's _c_<uuid>-lock-<seq>, Kazoo's
// <id>__lock__<seq>), which every client counts as a contender whatever
// the node, so a plain lock on the pool path would wait behind the member
// and list would show the member as its holder; and a semaphore's
// "leases" or "locks", which make the pool path look like a semaphore.
// A name that merely ends in a sequence number (build-0000000001) is
// fine: its node is no session's, so it is no contender (see Queued).
func (p Pool) Validate() error {
	if len(p.Members) == 0 {
		return fmt.Errorf("%w: no members", ErrBadPool)
	}
	seen := make(map[string]bool, len(p.Members))
	for _, m := range p.Members {
		switch {
		case m == "":
			return fmt.Errorf("%w: an empty member name", ErrBadPool)
		case m == "." || m == "..":
			return fmt.Errorf("%w: member %q is not a node name", ErrBadPool, m)
		case strings.ContainsRune(m, '/'):
			return fmt.Errorf("%w: member %q contains '/': a member is one node name under the path", ErrBadPool, m)
		case m == PoolQueueName:
			return fmt.Errorf("%w: member %q is the name of the pool's queue", ErrBadPool, m)
		case seen[m]:
			return fmt.Errorf("%w: member %q is listed twice", ErrBadPool, m)
		case m == semLeases || m == semLocks:
			return fmt.Errorf("%w: member %q is the name of a semaphore's child: the pool path would look like a semaphore", ErrBadPool, m)
		}
		if c, ok := ParseContender(m); ok && c.Flavor != FlavorUnknown {
			return fmt.Errorf("%w: member %q is named as a %s lock's node: a lock on the pool path would count it as a holder", ErrBadPool, m, c.Flavor)
		}
		if err := zkconn.ValidatePath("/" + m); err != nil {
			return fmt.Errorf("%w: member %q: %v", ErrBadPool, m, err)
		}
		seen[m] = true
	}
	if p.Take < 1 || p.Take > len(p.Members) {
		return fmt.Errorf("%w: cannot take %d of %d members", ErrBadPool, p.Take, len(p.Members))
	}
	return nil
}

// AcquirePool takes p.Take members of the pool at path and returns their
// leases in the order of their names. r says how to wait and what to write
// into the nodes; its mode must be exclusive. On every failure it deletes
// what it made before returning: the members it held and its place in the
// queue. With NoWait it fails with a *BusyError when a contender is ahead
// in the queue or too few of the members are free.
func AcquirePool(ctx context.Context, c *zkconn.Client, path string, p Pool, r Request) ([]*Lease, error) {
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if r.Mode.kind != Exclusive || r.Supersede != nil {
		return nil, fmt.Errorf("%w: a pool's members are taken exclusively", ErrBadPool)
	}
	r.nextOnce()
	qr := Request{Flavor: r.Flavor, Wait: r.Wait, Data: r.Data, OnQueued: r.OnQueued, OnWait: r.OnWait}
	head, err := acquireMutex(ctx, c, zkconn.Join(path, PoolQueueName), qr)
	if be := (*BusyError)(nil); errors.As(err, &be) {
		short := *be
		short.Pool = &PoolShortage{Path: path, Take: p.Take, Size: len(p.Members), Queued: true}
		return nil, &short
	}
	if err != nil {
		return nil, err
	}
	// Leaving the queue lets the next contender collect: only once this
	// one holds all it asked for, or has given everything back.
	defer head.cleanup()
	r.next()
	members := slices.Clone(p.Members)
	slices.Sort(members)
	held := make(map[string]*Lease, p.Take)
	giveBack := func() {
		for _, l := range held {
			l.cleanup()
		}
	}
	for {
		busy, err := collect(ctx, c, path, members, p.Take, held, r)
		if err != nil {
			giveBack()
			return nil, err
		}
		if len(held) == p.Take {
			out := make([]*Lease, 0, p.Take)
			for _, m := range members {
				if l := held[m]; l != nil {
					l.waited = l.waited || head.waited
					out = append(out, l)
				}
			}
			return out, nil
		}
		if r.Wait.try {
			giveBack()
			short := *busy[0].err
			short.Pool = &PoolShortage{Path: path, Take: p.Take, Free: len(held), Size: len(members)}
			return nil, &short
		}
		head.waited = true
		if r.OnWait != nil {
			r.OnWait(Waiting{Position: 1, Ahead: busy[0].err.Holder, Holder: zkconn.Join(path, busy[0].member, busy[0].err.Holder.Name), Node: head.Node})
		}
		if err := awaitMember(ctx, c, path, head, busy, r.Wait); err != nil {
			giveBack()
			return nil, err
		}
	}
}

// busyMember is a member the head could not take, and who held it.
type busyMember struct {
	member string
	err    *BusyError
}

// collect tries each member not yet held, without waiting, until take are
// held, and returns the members that were busy.
func collect(ctx context.Context, c *zkconn.Client, path string, members []string, take int, held map[string]*Lease, r Request) ([]busyMember, error) {
	var busy []busyMember
	for _, m := range members {
		if len(held) == take {
			break
		}
		if held[m] != nil {
			continue
		}
		mr := Request{Flavor: r.Flavor, Wait: NoWait, Data: r.Data}
		l, err := acquireMutex(ctx, c, zkconn.Join(path, m), mr)
		var be *BusyError
		switch {
		case errors.As(err, &be):
			busy = append(busy, busyMember{member: m, err: be})
		case err != nil:
			return nil, err
		default:
			held[m] = l
		}
	}
	return busy, nil
}

// awaitMember waits until one of the busy members' queues changes: a child
// watch on each of them, set by this contender alone (the queue's head),
// so no member is watched by more than one pool contender. A member whose
// listing shows no contender is free already, and the wait ends at once.
//
// The head's own node in the queue is watched as well: a revoke of a pool
// contender writes the request there, the one node it has while it waits,
// and a contender asked to leave gives up at once rather than when a
// member frees (the caller then gives back the members it took).
func awaitMember(ctx context.Context, c *zkconn.Client, path string, head *Lease, busy []busyMember, w Wait) error {
	wctx, cancel, err := w.waitCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	changed := make(chan struct{}, 1)
	notify := func(ev <-chan zk.Event) {
		// One goroutine per watch, ended by cancel when the wait ends.
		go func() {
			select {
			case <-ev:
				select {
				case changed <- struct{}{}:
				default:
				}
			case <-wctx.Done():
			}
		}()
	}
	data, st, own, err := c.GetW(wctx, head.Node)
	stop, readErr := head.takeOwnWatch(wctx, data, st, own, err)
	switch {
	case stop != nil:
		return stop
	case readErr != nil && zkconn.IsConnectionLoss(readErr):
		return waitErr(wctx, c.WaitSession(wctx))
	case readErr != nil:
		return waitErr(wctx, readErr)
	}
	notify(own)
	for _, b := range busy {
		children, ev, err := c.ChildrenW(wctx, zkconn.Join(path, b.member))
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil // the member's queue is gone: it is free
		case err != nil && zkconn.IsConnectionLoss(err):
			return waitErr(wctx, c.WaitSession(wctx))
		case err != nil:
			return waitErr(wctx, err)
		}
		queued, err := Queued(wctx, c, zkconn.Join(path, b.member), children)
		switch {
		case err != nil && zkconn.IsConnectionLoss(err):
			return waitErr(wctx, c.WaitSession(wctx))
		case err != nil:
			return waitErr(wctx, err)
		case len(queued) == 0:
			// Free already, as collect counts: it saw a holder that
			// has left since.
			return nil
		}
		notify(ev)
	}
	select {
	case <-changed:
		return nil
	case <-c.Lost():
		return c.LostErr()
	case <-wctx.Done():
		return waitErr(wctx, wctx.Err())
	}
}

// PoolMember is the member a lease of a pool at path holds: the name of
// its lock under path.
func PoolMember(path string, l *Lease) string {
	return strings.TrimPrefix(l.Path, strings.TrimSuffix(path, "/")+"/")
}
