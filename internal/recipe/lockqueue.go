package recipe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

// cleanupTimeout bounds deleting our node on the way out after a failure or
// a cancelled wait, which must happen even though the caller's context is
// already done.
const cleanupTimeout = 5 * time.Second

// Lease is a held lock.
type Lease struct {
	c *zkconn.Client
	// Path is the lock path; Node is our contender node under it.
	Path, Node string
	// Mode is what the lease holds.
	Mode Mode
	// own is a data watch on our own node, set when we start to wait. The
	// server sends a client its watch events in zxid order, and
	// go-zookeeper hands them out in that order from one goroutine, so
	// when the predecessor's deletion arrives, a deletion of our own node
	// that happened first is already waiting here: the handoff learns
	// that our node is gone without a request of its own.
	own <-chan zk.Event
	// ownChanged is set when that watch said our node's data changed
	// while we waited: only a revoker writes a waiter's node, so the data
	// is read (checkRevoked) before the wait goes on or the lock is taken.
	ownChanged bool
	// waited is set once we had to wait for another contender: only then
	// is the acquisition worth recording (see MarkAcquired).
	waited bool
	// supersede is set for a contender of a superseding queue.
	supersede *Supersede
	watchState
}

// acquireMutex joins the queue at path (see Acquire).
func acquireMutex(ctx context.Context, c *zkconn.Client, path string, r Request) (*Lease, error) {
	stem := nodeStem(r.Flavor, r.Mode.kind)
	node, err := createProtected(ctx, c, path, stem, r.Data)
	if err != nil {
		return nil, err
	}
	if r.OnQueued != nil {
		r.OnQueued()
	}
	l := &Lease{c: c, Path: path, Node: node, Mode: r.Mode, supersede: r.Supersede}
	if err := l.wait(ctx, r); err != nil {
		l.cleanup()
		return nil, supersededWaiter(err)
	}
	return l, nil
}

// createProtected creates our ephemeral-sequential node. If the connection
// drops after the server applied the create but before its reply arrived, the
// node exists but we do not know its name; a second create would leave the
// first one in the queue, ahead of us, for as long as our session lives. So
// the name carries a fresh GUID, and after a connection loss we look for it
// before creating again.
func createProtected(ctx context.Context, c *zkconn.Client, path, stem string, data []byte) (node string, err error) {
	var made []string // containers made here, removed again if we fail
	defer func() {
		if err != nil {
			c.RemoveEmpty(made)
		}
	}()
	for attempt := 1; ; attempt++ {
		node, err := c.Create(ctx, zkconn.Join(path, stem), data, zk.FlagEphemeralSequential)
		switch {
		case err == nil:
			return node, nil
		case errors.Is(err, zk.ErrNoNode) && attempt < zkconn.MaxCreateAttempts:
			err := c.EnsurePath(ctx, path, &made)
			if err != nil && zkconn.IsConnectionLoss(err) {
				// A parent's create may have been applied or not; the
				// next walk finds out (NodeExists). The session decides
				// whether there is a next walk: an expired one is the
				// caller's to replace, not an unreachable ensemble.
				err = c.WaitSession(ctx)
			}
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return "", err
			}
		case errors.Is(err, zk.ErrNoChildrenForEphemerals):
			return "", fmt.Errorf("%w: %s cannot hold a lock queue", zkconn.ErrEphemeralParent, path)
		case zkconn.IsConnectionLoss(err):
			node, err := findOwn(ctx, c, path, stem)
			if err != nil && !errors.As(err, new(*zkconn.OpError)) {
				// Lost with the session (a server that closed it for want
				// of authentication, say): say which request it cost.
				err = &zkconn.OpError{Op: zkconn.OpCreate, Path: zkconn.Join(path, stem), Err: err}
			}
			if err != nil {
				return "", err
			}
			if node != "" {
				return node, nil
			}
		default:
			return "", err
		}
	}
}

// findOwn waits for the session to come back and looks for a child whose
// name starts with stem (which holds our GUID).
func findOwn(ctx context.Context, c *zkconn.Client, path, stem string) (string, error) {
	for {
		if err := c.WaitSession(ctx); err != nil {
			return "", err
		}
		children, err := c.Children(ctx, path)
		switch {
		case err == nil:
			for _, ch := range children {
				if strings.HasPrefix(ch, stem) {
					return zkconn.Join(path, ch), nil
				}
			}
			return "", nil
		case errors.Is(err, zk.ErrNoNode):
			return "", nil
		case zkconn.IsConnectionLoss(err):
			continue
		default:
			return "", err
		}
	}
}

func (l *Lease) name() string { return l.Node[strings.LastIndexByte(l.Node, '/')+1:] }

// position lists the queue with list (retrying across connection loss) and
// finds our node in it. Our node missing means the session that owned it is
// gone, or someone deleted the node. It also returns list's watch, if list set one.
//
// The queue is the children that Queued counts, as list and holders do: a
// child that merely ends in a sequence number takes part only if a session
// owns it. A persistent one is a lock path of its own (build-0000000001)
// or a node left by another client, and would otherwise hold this lock
// for as long as it exists while holders says the lock is free.
func (l *Lease) position(ctx context.Context, list func() ([]string, <-chan zk.Event, error)) ([]Contender, int, <-chan zk.Event, error) {
	name := l.name()
	for {
		children, ev, err := list()
		var q []Contender
		if err == nil {
			q, err = Queued(ctx, l.c, l.Path, children)
		}
		if err != nil {
			if zkconn.IsConnectionLoss(err) {
				if err := l.c.WaitSession(ctx); err != nil {
					return nil, 0, nil, err
				}
				continue
			}
			if errors.Is(err, zk.ErrNoNode) {
				// The parent is gone, so our node, its child, is too
				// (deleted with its siblings, the empty container then
				// reaped).
				return nil, 0, nil, l.goneErr()
			}
			return nil, 0, nil, err
		}
		for i := range q {
			if q[i].Name == name {
				return q, i, ev, nil
			}
		}
		return nil, 0, nil, l.goneErr()
	}
}

// wait is the herd-free loop: list the children without a watch, and if we
// cannot hold yet, watch only the one node we wait for (and our own node, so
// that its deletion is known at the handoff without a request).
func (l *Lease) wait(ctx context.Context, r Request) error {
	cleared := map[string]bool{} // contenders already checked for a flavor conflict
	relists := 0                 // listings again after a busy holder left
	for first := true; ; first = false {
		// A superseding contender reads its own data before the listing,
		// which then decides (see supersede.go).
		var superseder *Superseder
		if l.supersede != nil {
			var err error
			if superseder, err = l.readSuperseded(ctx); err != nil {
				return err
			}
		}
		var children []string
		q, idx, _, err := l.position(ctx, func() ([]string, <-chan zk.Event, error) {
			var err error
			children, err = l.c.Children(ctx, l.Path)
			return children, nil, err
		})
		if err != nil {
			return err
		}
		if err := l.checkRevoked(ctx); err != nil {
			return err
		}
		if superseder != nil && blocker(q, idx) >= 0 {
			return &SupersededError{Path: l.Path, Node: l.Node, By: *superseder}
		}
		if first {
			// One recipe per path. This listing comes after our create,
			// and a semaphore checks the path after creating its own
			// node, so of two that arrive together the later one always
			// sees the earlier. Checking before our create as well would
			// cost every acquisition a round trip for nothing more.
			conflict, err := semaphoreNode(ctx, l.c, l.Path, children)
			if err != nil {
				return err
			}
			if conflict != nil {
				return conflict
			}
		}
		if err := l.checkFlavors(ctx, q, idx, cleared); err != nil {
			return err
		}
		if first && l.supersede != nil {
			if err := l.supersedeAhead(ctx, q, idx, r.superseder(l.Node)); err != nil {
				return err
			}
			if l.supersede.Cancel {
				if err := l.cancelAhead(ctx, q, idx, r.superseder(l.Node)); err != nil {
					return err
				}
			}
		}
		ahead := blocker(q, idx)
		if ahead < 0 {
			// The listing we just read has our node in it: it exists,
			// and as an ephemeral node created by this session (the
			// session is checked on every reply) it is ours.
			r.next()
			return nil
		}
		if r.Wait.try {
			if busyListed != nil {
				busyListed()
			}
			busy, left := l.busy(ctx, q, idx)
			if left && relists < maxBusyRelists {
				// The holder listed had left by the time its data was
				// read: the lock may be ours now, and the busy line
				// must not name a node that no longer holds it.
				relists++
				continue
			}
			return busy
		}
		if Holds(q, ahead) {
			// Everyone we wait for holds the lock: its release is ours.
			r.next()
		}
		if r.OnWait != nil {
			r.OnWait(Waiting{Position: idx + 1, Ahead: q[ahead], Holder: zkconn.Join(l.Path, q[0].Name), Node: l.Node})
		}
		l.waited = true
		held, err := l.awaitWithin(ctx, r.Wait, zkconn.Join(l.Path, q[ahead].Name), ahead == 0)
		switch {
		case err != nil:
			return err
		case held:
			return nil
		}
	}
}

// awaitWithin is await, bounded by the wait's deadline.
func (l *Lease) awaitWithin(ctx context.Context, w Wait, aheadNode string, atHead bool) (bool, error) {
	wctx, cancel, err := w.waitCtx(ctx)
	if err != nil {
		return false, err
	}
	defer cancel()
	held, err := l.await(wctx, aheadNode, atHead)
	return held, waitErr(wctx, err)
}

// await watches the contender ahead of us until something calls for a new
// listing, or, if that contender is at the head of the queue and its
// deletion is the event, until we hold the lock (held). A data change
// (the holder ahead recording when it acquired, or being asked to stop)
// leaves the queue as it was: the watch is set again without listing.
func (l *Lease) await(ctx context.Context, aheadNode string, atHead bool) (held bool, err error) {
	for {
		ch, err := l.watch(ctx, aheadNode)
		switch {
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, errLookAgain):
			return false, nil // gone already: look again
		case err != nil && zkconn.IsConnectionLoss(err):
			return false, l.c.WaitSession(ctx)
		case err != nil:
			return false, err
		}
		select {
		case ev := <-ch:
			switch {
			case ev.Type == zk.EventNodeDeleted && atHead && l.ownIntact():
				// The contender we waited for was at the head of the
				// queue and is gone: nobody can have joined ahead of us
				// (sequence numbers only grow), so we hold the lock
				// without listing again. That saves a round trip on every
				// handoff. Our own node must still be there: a deletion
				// of it (an operator's deleteall) would have reached our
				// own watch before this event.
				return true, nil
			case ev.Type == zk.EventNodeDataChanged && l.ownIntact():
				continue
			}
			// Otherwise (another deletion, a dropped watch, news about
			// our own node) look again: the listing finds out whether
			// our node is still there.
			return false, nil
		case ev := <-l.own:
			l.ownEvent(ev)
			return false, nil
		case <-l.c.Lost():
			return false, l.c.LostErr()
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// watch sets a data watch on the node we wait for and, the first time, one
// on our own node as well. Both requests are in flight together, so the
// second one costs no round trip of its own.
func (l *Lease) watch(ctx context.Context, ahead string) (<-chan zk.Event, error) {
	type result struct {
		data []byte
		st   *zk.Stat
		ch   <-chan zk.Event
		err  error
	}
	var mine chan result
	if l.own == nil {
		mine = make(chan result, 1)
		go func() {
			data, st, ch, err := l.c.GetW(ctx, l.Node)
			mine <- result{data, st, ch, err}
		}()
	}
	data, _, ch, err := l.c.GetW(ctx, ahead)
	if err == nil {
		err = l.checkAhead(data, ahead)
	}
	if mine != nil {
		r := <-mine
		stop, readErr := l.takeOwnWatch(ctx, r.data, r.st, r.ch, r.err)
		if stop != nil {
			return nil, stop
		}
		if readErr != nil && err == nil {
			// Not watched this time (a dropped connection): the next
			// round tries again, and the listing still checks our node.
			err = readErr
		}
	}
	return ch, err
}

// takeOwnWatch takes the reply to a GetW on our own node. Our node gone, or
// asked to leave the queue (Curator's revocable locks watch for this while
// they wait, too), ends the wait (stop). A read that failed is returned for
// the caller to judge (readErr); otherwise the watch is kept in l.own.
func (l *Lease) takeOwnWatch(ctx context.Context, data []byte, st *zk.Stat, ch <-chan zk.Event, err error) (stop, readErr error) {
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return l.goneErr(), nil
	case err != nil:
		return nil, err
	case isRevokeRequest(data):
		return l.revokedErr(ctx, st), nil
	case l.supersede != nil && supersededIn(data) != nil:
		// Told before the watch was set: the wait loop reads it again.
		l.own, l.ownChanged = ch, true
		return errLookAgain, nil
	}
	l.own = ch
	return nil, nil
}

// ownIntact reports whether nothing has been heard about our own node since
// its watch was set (always true before the first wait: the listing that
// decided proved the node was there).
func (l *Lease) ownIntact() bool {
	select {
	case ev := <-l.own:
		l.ownEvent(ev)
		return false
	default:
		return true
	}
}

// ownEvent consumes an event from our own node's watch: any event ends that
// watch, so it is set again at the next wait. A data change is remembered
// for checkRevoked.
func (l *Lease) ownEvent(ev zk.Event) {
	l.own = nil
	if ev.Type == zk.EventNodeDataChanged {
		l.ownChanged = true
	}
}

// goneErr is the error for a node of ours that has vanished while the
// session lives: an operator or a script deleted it.
func (l *Lease) goneErr() error {
	if err := l.c.LostErr(); err != nil {
		return err
	}
	return &NodeGoneError{Path: l.Path, Node: l.Node}
}

// checkFlavors refuses to share a path with another library's contenders
// that cannot see our node. Other zklocks see every naming, so only nodes of
// a different family whose data is not zklock's are a conflict; their data
// is read only in that case, so the usual queue costs nothing extra.
func (l *Lease) checkFlavors(ctx context.Context, q []Contender, idx int, cleared map[string]bool) error {
	ours := q[idx].family()
	for i, c := range q {
		f := c.family()
		if i == idx || f == ours || f == familyOther || cleared[c.Name] {
			continue
		}
		data, _, err := l.c.Get(ctx, zkconn.Join(l.Path, c.Name))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		if byZklock(data) {
			cleared[c.Name] = true
			continue
		}
		return &FlavorConflictError{Path: l.Path, Node: c.Name, Other: f.String(),
			Names: ours.nodeKind(), Flavor: f.flavorFor()}
	}
	return nil
}

// blocker returns the index of the contender we must wait for, or -1 if we
// hold the lock. An exclusive contender waits for its immediate predecessor;
// a shared one for the nearest exclusive contender ahead of it. Either way
// each node is watched by at most one waiter, so a release wakes one waiter
// (or, after a writer, the readers behind it, who all proceed).
func blocker(q []Contender, idx int) int {
	if q[idx].Kind != Shared {
		return idx - 1
	}
	for i := idx - 1; i >= 0; i-- {
		if q[i].Kind != Shared {
			return i
		}
	}
	return -1
}

// busy describes the current holder for a Try acquisition; left says
// that holder had gone when its data was read.
func (l *Lease) busy(ctx context.Context, q []Contender, idx int) (e *BusyError, left bool) {
	holder := q[0]
	for i := range q[:idx] {
		if Holds(q, i) {
			holder = q[i]
			break
		}
	}
	data, _, err := l.c.Get(ctx, zkconn.Join(l.Path, holder.Name))
	e = &BusyError{Path: l.Path, Holder: holder, Data: data, Unread: err}
	return e, errors.Is(err, zk.ErrNoNode)
}

// busyListed, when set (by tests), runs between a try's listing and its
// read of the holder: the window in which the holder may leave.
var busyListed func()

// maxBusyRelists bounds how often a try lists again because the holder it
// found had left before its data was read; past it the lock is changing
// hands so fast that the busy line names the last holder seen, without
// its data.
const maxBusyRelists = 5

// cleanup deletes our node after a failed or abandoned wait.
func (l *Lease) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_ = l.Release(ctx)
}

// Release deletes our node; the next waiter's watch fires. A node that is
// already gone (its session ended) counts as released.
func (l *Lease) Release(ctx context.Context) error {
	l.endWatch()
	for {
		err := l.c.Delete(ctx, l.Node)
		switch {
		case err == nil, errors.Is(err, zk.ErrNoNode):
			return nil
		case zkconn.IsConnectionLoss(err):
			// The delete may have been applied; retrying is safe since a
			// second delete answers NoNode.
			if err := l.c.WaitSession(ctx); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

// FencingToken is our node's creation zxid. Holders of one lock path are
// served in creation order, so it grows strictly from each holder to the
// next. It normally comes from the create's reply; only if that was lost
// (a dropped connection) does it cost an exists call.
func (l *Lease) FencingToken(ctx context.Context) (int64, error) {
	if z, ok := l.c.CreateZxid(l.Node); ok {
		return z, nil
	}
	ok, st, err := l.c.Exists(ctx, l.Node)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%w: our node %s is gone", zkconn.ErrSessionLost, l.Node)
	}
	return st.Czxid, nil
}
