package recipe

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zkconn"
)

var (
	// ErrNodeGone means one of our lock nodes was deleted while we held the
	// lock (by an operator, or because the session ended).
	ErrNodeGone = errors.New("lock node deleted")
	// ErrReleased is a lease's Err once its holder gave it up: by Release,
	// or by closing the client, whose session's end deletes the node.
	ErrReleased = errors.New("lease released")
)

// Done returns a channel that is closed once the lease can no longer be
// trusted, and Err then says why:
//
//   - the lease's node was deleted (an error wrapping ErrNodeGone): by an
//     operator, a script, or a revoker that deletes rather than asks;
//   - the session that owns the node was lost (an error wrapping
//     zkconn.ErrSessionLost): it expired, go-zookeeper replaced it with a
//     new one, the ensemble refused it, or the ensemble no longer has the
//     state this session saw (restored from an older copy, or wiped);
//   - the lease was released (ErrReleased): Release, or the client closed.
//
// A lease is not lost while its client is merely cut off from the
// ensemble: the session may come back, on another server. Done stays open
// then, even past the moment the session could have expired. A holder
// that must stop its work before the ensemble can expire the session and
// hand the lock on counts from the client's QuorumHeard instead (see
// zkconn.Client.Contact), as zklock's own runner does.
//
// Done is the lease's counterpart of etcd's concurrency.Session.Done. The
// first call to Done, Err or Revoked sets a data watch on the node (one
// request); a deletion is then known as soon as the server tells it, with
// no polling. The watch ends with the lease.
func (l *Lease) Done() <-chan struct{} { return l.watched().done }

// Err is nil while Done is open, and the reason once it is closed.
func (l *Lease) Err() error {
	w := l.watched()
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

// Revoked delivers each request to give the lease up (Curator's protocol,
// see Revoke) that is written into its node while the lease is held, also
// one written before the watch was set. The lease is still held: the
// holder decides whether to give it up. A request is dropped if the one
// before it is still unread.
func (l *Lease) Revoked() <-chan *RevokedError { return l.watched().revoked }

// leaseWatch is the state behind Done, Err and Revoked.
type leaseWatch struct {
	done    chan struct{}
	err     error // set before done is closed
	cancel  context.CancelFunc
	revoked chan *RevokedError
}

// watched starts the lease's watch, once, and returns its state.
func (l *Lease) watched() *leaseWatch {
	l.watchOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		w := &leaseWatch{done: make(chan struct{}), cancel: cancel, revoked: make(chan *RevokedError, 1)}
		l.ownWatch = w
		go func() {
			defer cancel()
			w.err = l.watchOwn(ctx, w.revoked)
			close(w.done)
		}()
	})
	return l.ownWatch
}

// endWatch ends the lease's watch, started or not, as released.
func (l *Lease) endWatch() {
	l.watchOnce.Do(func() {
		w := &leaseWatch{done: make(chan struct{}), cancel: func() {}, revoked: make(chan *RevokedError, 1), err: ErrReleased}
		close(w.done)
		l.ownWatch = w
	})
	l.ownWatch.cancel()
	<-l.ownWatch.done
}

// watchOwn keeps a data watch on our node until the lease can no longer be
// trusted, and returns why (see Done); ctx's end is a release. Data that
// asks us to give up the lock is sent on revoked (dropped if an earlier
// request is still unread there); any other change only re-arms the watch.
func (l *Lease) watchOwn(ctx context.Context, revoked chan<- *RevokedError) error {
	for {
		data, st, ev, err := l.c.GetW(ctx, l.Node)
		switch {
		case ctx.Err() != nil:
			return ErrReleased
		case err == nil && isRevokeRequest(data):
			select {
			case revoked <- l.revokedErr(ctx, st):
			default:
			}
		case errors.Is(err, zk.ErrNoNode):
			return l.sessionOr(fmt.Errorf("%w: %s", ErrNodeGone, l.Node))
		case err != nil && zkconn.IsConnectionLoss(err):
			if err := l.c.WaitSession(ctx); err != nil {
				return l.sessionOr(err)
			}
			continue
		case err != nil:
			// The server refused a read of our own node, say: no watch,
			// but the session's loss still ends the lease.
			return l.untilLost(ctx, err)
		}
		select {
		case <-ctx.Done():
			return ErrReleased
		case <-l.c.Lost():
			return l.c.LostErr()
		case <-l.c.Closed():
			return ErrReleased
		case e := <-ev:
			switch {
			case e.Type == zk.EventNodeDeleted:
				return l.sessionOr(fmt.Errorf("%w: %s", ErrNodeGone, l.Node))
			case e.Type == zk.EventNotWatching:
				if err := l.sessionOr(nil); err != nil {
					return err
				}
				if zkconn.IsSessionLoss(e.Err) {
					return fmt.Errorf("%w: %w", zkconn.ErrSessionLost, e.Err)
				}
			}
		}
	}
}

// sessionOr is the lease's end when its node is gone or its watch ended:
// the client's own close is a release, the session's loss is the reason
// (a node deleted with its session says less), and otherwise err.
func (l *Lease) sessionOr(err error) error {
	select {
	case <-l.c.Closed():
		return ErrReleased
	default:
	}
	if lost := l.c.LostErr(); lost != nil {
		return lost
	}
	if errors.Is(err, zkconn.ErrClosed) {
		return ErrReleased
	}
	return err
}

// untilLost waits, without a watch, for the session's loss or the lease's
// release; why is why no watch could be set.
func (l *Lease) untilLost(ctx context.Context, why error) error {
	select {
	case <-ctx.Done():
		return ErrReleased
	case <-l.c.Closed():
		return ErrReleased
	case <-l.c.Lost():
		return fmt.Errorf("%w (and %s could not be watched: %v)", l.c.LostErr(), l.Node, why)
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
	for _, n := range nodes {
		l := &Lease{c: c, Path: path.Dir(n), Node: n}
		ignored := make(chan *RevokedError, 1)
		go func() {
			err := l.watchOwn(ctx, ignored)
			if ctx.Err() == nil && !errors.Is(err, ErrReleased) {
				gone <- err
			}
		}()
	}
	return gone
}

// watchState is embedded in Lease: its own watch (see Done).
type watchState struct {
	watchOnce sync.Once
	ownWatch  *leaseWatch
}
