package zkconn

import (
	"context"
	"sync"
	"time"
)

// # Who needs the keepalive's syncs?
//
// QuorumHeard moves only with a ConnectResponse, a write, or a sync (see
// quorum.go); a session that only waits hears nothing else from the
// leader, and needs nothing else: its pings keep it alive, and a waiter
// reads no deadline from QuorumHeard. A lock holder does, for as long as
// it holds (the command must be dead before the leader could expire the
// session). So the keepalive syncs every T/20 only once the owner asks
// for it with KeepQuorumHeard, from the moment a lock is about to be held:
// a waiter deep in a queue sends the ensemble nothing but its pings.
//
// Certification lags: a sync vouches only for a request answered at least
// T/4 before it was sent. When the syncs start late, the first one
// certifies the session's latest ping old enough (go-zookeeper pings every
// T/3), no more than about T/4 + T/3 behind; from T/4 on, the syncs
// certify each other and the lag is the usual 0.35·T. ConfirmQuorum waits
// until the syncs are in effect, which on a healthy ensemble takes one
// round trip at most.

// quorumKeep is the state behind KeepQuorumHeard and ConfirmQuorum.
type quorumKeep struct {
	// wanted is closed by KeepQuorumHeard: the keepalive starts its
	// syncs.
	wanted chan struct{}
	once   sync.Once

	mu    sync.Mutex
	since time.Time // when KeepQuorumHeard was first called
	// synced is the send time of the latest keepalive sync that the
	// ensemble answered; changed is closed, and replaced, when it moves.
	synced  time.Time
	changed chan struct{}
}

func newQuorumKeep() *quorumKeep {
	return &quorumKeep{wanted: make(chan struct{}), changed: make(chan struct{})}
}

// KeepQuorumHeard starts the keepalive's syncs, which keep QuorumHeard
// within about 0.35·T of now for the rest of the session (quorum.go). Call
// it once the session's QuorumHeard is about to matter: when a lock it
// waits for is about to be held. The first sync goes out at once, or T/20
// after the session began, whichever is later: until then the session's
// ConnectResponse certifies a moment at least as recent. Calling it again
// does nothing; it never blocks.
func (c *Client) KeepQuorumHeard() {
	q := c.quorum
	q.once.Do(func() {
		q.mu.Lock()
		q.since = time.Now()
		q.mu.Unlock()
		close(q.wanted)
	})
}

// ConfirmQuorum starts the syncs (KeepQuorumHeard) and returns once they
// are in effect: at once if QuorumHeard trails now by no more than they
// keep it (T/4 and two of their periods), else once a sync sent since the
// syncs started, and within the last two periods, has been answered; a
// reconnect that brings QuorumHeard that close also ends the wait. It
// returns early with the session's loss, ErrClosed, or ctx's error.
//
// A holder calls it before its command starts: a session that waited
// without syncs has a QuorumHeard as old as its last write, hours maybe,
// and no deadline can be counted from that.
func (c *Client) ConfirmQuorum(ctx context.Context) error {
	c.KeepQuorumHeard()
	for {
		// Take both channels before reading: no change falls between.
		moved, synced := c.wire.changes(), c.quorum.answered()
		if c.quorumInEffect(time.Now()) {
			return nil
		}
		select {
		case <-moved:
		case <-synced:
		case <-c.sess.lost:
			return c.sess.err()
		case <-c.done:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// quorumInEffect reports whether QuorumHeard is, at now, as recent as the
// keepalive's syncs keep it (see ConfirmQuorum).
func (c *Client) quorumInEffect(now time.Time) bool {
	t := c.Contact().Timeout
	every := keepaliveEvery(t)
	if now.Sub(c.QuorumHeard()) <= t/4+2*every {
		return true
	}
	q := c.quorum
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.synced.IsZero() && !q.synced.Before(q.since) && !q.synced.Before(now.Add(-2*every))
}

// answered returns a channel that is closed at the next answered sync.
func (q *quorumKeep) answered() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// syncedAt records an answered sync sent at sent.
func (q *quorumKeep) syncedAt(sent time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if sent.After(q.synced) {
		q.synced = sent
		close(q.changed)
		q.changed = make(chan struct{})
	}
}

// keepaliveEvery is the period of the syncs under session timeout t.
func keepaliveEvery(t time.Duration) time.Duration {
	return max(t/keepaliveDivisor, time.Millisecond)
}
