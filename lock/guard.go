package lock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

var (
	// ErrNoContact means the ensemble has not confirmed the session for so
	// long that it could expire before a command could be stopped.
	ErrNoContact = errors.New("no contact with the ZooKeeper quorum")
	// ErrNodeGone means one of our lock nodes was deleted while we held the
	// lock (by an operator, or because the session ended).
	ErrNodeGone = errors.New("lock node deleted")
)

// Guard watches the locks one session holds and reports, once, on the
// returned channel when they must be treated as lost:
//
//   - the session expired, or go-zookeeper replaced it with a new one;
//   - one of our nodes was deleted: each is watched with a data watch of
//     its own, so a deletion is known as soon as the server tells it, with
//     no polling;
//   - the budget's Deadline has passed since the client's QuorumHeard: the
//     ensemble has not confirmed the session for so long that the command
//     must be stopped now to be dead before the leader could expire it.
//
// Every time QuorumHeard moves, renew (when set) is called with the new
// moments at which the command must be sent SIGTERM and SIGKILL, so that a
// watchdog outside this process can enforce them if this process stops
// running (see lockexec.Watchdog). renew is called from Guard's goroutine,
// once before Guard returns.
//
// Each revocation request written into one of our nodes (Curator's
// protocol, see Revoke) is reported on revoked: the lock is still held, and
// the caller decides whether to give it up. A request is seen in the same
// data watch, also when it was written before the watch was set.
//
// The goroutines behind it end when ctx is done; the channels are never
// closed, so a caller selecting on them after ctx ends just never fires.
func Guard(ctx context.Context, c *zkconn.Client, leases []*Lease, b Budget, renew func(stop, kill time.Time)) (lost <-chan error, revoked <-chan *RevokedError) {
	out := make(chan error, 1)
	rev := make(chan *RevokedError, len(leases))
	var reported bool
	report := func(err error) {
		if !reported {
			reported = true
			out <- err
		}
	}
	heard := c.QuorumHeard()
	if renew != nil {
		renew(b.Stop(heard), b.Kill(heard))
	}
	gone := make(chan error, len(leases))
	for _, l := range leases {
		go l.watchOwn(ctx, gone, rev)
	}
	go func() {
		timer := time.NewTimer(time.Until(b.Stop(heard)))
		defer timer.Stop()
		// QuorumHeard moves with the keepalive's syncs (every T/20):
		// look that often, so a renewal is never far behind.
		poll := time.NewTicker(max(b.Timeout/20, time.Millisecond))
		defer poll.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.Lost():
				report(c.LostErr())
			case err := <-gone:
				report(err)
			case <-poll.C:
				if now := c.QuorumHeard(); now.After(heard) {
					heard = now
					timer.Reset(time.Until(b.Stop(heard)))
					if renew != nil && !reported {
						renew(b.Stop(heard), b.Kill(heard))
					}
				}
			case <-timer.C:
				if now := c.QuorumHeard(); now.After(heard) {
					heard = now
					timer.Reset(time.Until(b.Stop(heard)))
					continue
				}
				report(fmt.Errorf("%w for %s (session timeout %s): the session may expire before the command could be stopped",
					ErrNoContact, time.Since(heard).Round(10*time.Millisecond), b.Timeout))
			}
		}
	}()
	return out, rev
}

// watchOwn keeps a data watch on our node until ctx ends, and sends
// ErrNodeGone (or the session's loss) on gone if the node goes. Data that
// asks us to give up the lock is sent on revoked (dropped if an earlier
// request is still unread there); any other change only re-arms the watch.
func (l *Lease) watchOwn(ctx context.Context, gone chan<- error, revoked chan<- *RevokedError) {
	for {
		data, st, ev, err := l.c.GetW(ctx, l.Node)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && isRevokeRequest(data):
			select {
			case revoked <- l.revokedErr(ctx, st):
			default:
			}
		case errors.Is(err, zk.ErrNoNode):
			gone <- fmt.Errorf("%w: %s", ErrNodeGone, l.Node)
			return
		case err != nil && zkconn.IsConnectionLoss(err):
			if err := l.c.WaitSession(ctx); err != nil {
				if ctx.Err() == nil {
					gone <- err
				}
				return
			}
			continue
		case err != nil:
			if zkconn.IsSessionLoss(err) {
				gone <- err
			}
			// Anything else (the server refusing a read of our own
			// node) leaves the deadline and the session's loss to
			// decide.
			return
		}
		select {
		case <-ctx.Done():
			return
		case e := <-ev:
			switch {
			case e.Type == zk.EventNodeDeleted:
				gone <- fmt.Errorf("%w: %s", ErrNodeGone, l.Node)
				return
			case e.Type == zk.EventNotWatching && zkconn.IsSessionLoss(e.Err):
				gone <- fmt.Errorf("%w: %w", zkconn.ErrSessionLost, e.Err)
				return
			}
		}
	}
}

// WatchHeld watches nodes that another session holds (an ancestor zklock's,
// which a re-entered run relies on) and reports on the returned channel
// when one of them is deleted, or when this client's session is lost and
// can no longer tell. The ancestor releases when its own command exits,
// even if a re-entered run started in the background still goes on: that
// run must then stop, as its lock is no longer held. A revocation written
// into such a node is the ancestor's to act on, and is ignored here. The
// watches end with ctx.
func WatchHeld(ctx context.Context, c *zkconn.Client, nodes []string) <-chan error {
	gone := make(chan error, len(nodes))
	ignored := make(chan *RevokedError, len(nodes))
	for _, n := range nodes {
		l := &Lease{c: c, Path: path.Dir(n), Node: n}
		go l.watchOwn(ctx, gone, ignored)
	}
	return gone
}
