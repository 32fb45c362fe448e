package zkconn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// The keepalive is the session's own heartbeat, beside go-zookeeper's pings
// (every T/3, answered by whichever server the client is connected to, so
// they prove nothing about the leader; see quorum.go). It does two things:
//
//   - Once the owner asks for it (KeepQuorumHeard, see quorumkeep.go), it
//     sends a sync every T/20. Each successful sync certifies an earlier
//     request, which keeps QuorumHeard within about 0.35·T of now while the
//     ensemble is healthy. A sync costs the leader one round trip to the
//     follower and no write.
//   - For the life of the Client, it watches for a silent server. A
//     member that stops answering (a partition, a long GC pause, a frozen
//     VM) still holds the TCP connection open, and go-zookeeper notices
//     only when its read times out, 2/3·T after the last byte: too late
//     to keep a lock. When a
//     request waits for its reply and the server has sent nothing for
//     longer than the connection's silence bound (T/10, or more on a slow
//     link: silenceBound in roundtrip.go), the keepalive closes the
//     connection; go-zookeeper then moves on to the next server of the
//     connect string and resumes the session there (the handshake itself
//     is bounded, see wire.go), normally within T/5 of the silence.

// keepaliveEvery and silentAfter, as fractions of the negotiated timeout.
const (
	keepaliveDivisor = 20
	silenceDivisor   = 10
)

// minSilence keeps a slow but healthy round trip on a loaded machine from
// counting as silence when T is tiny.
const minSilence = 100 * time.Millisecond

// handshakeLimit is how long a connection may take to answer the
// ConnectRequest: long enough for a loaded server that must ask its leader
// to revalidate the session, short enough that one wedged server costs a
// reconnect at most a second.
func handshakeLimit(t time.Duration) time.Duration {
	return min(max(t/8, 300*time.Millisecond), time.Second)
}

// keepalive runs until c.stop is closed (by Close).
func (c *Client) keepalive() {
	defer close(c.stopped)
	// The intervals follow the session timeout in effect, which a
	// reconnect may change (timeout.go).
	t := c.Contact().Timeout
	every := keepaliveEvery(t)
	wake := time.NewTimer(every)
	defer wake.Stop()
	// The request cannot be cancelled; like the syncs below, it ends
	// with its reply or when Close flushes it.
	go c.learnMode()
	synced := make(chan struct{}, 1)
	inFlight := false
	// The syncs wait for KeepQuorumHeard (quorumkeep.go); the first one
	// never goes out sooner than T/20 into the session.
	wanted, syncing := c.quorum.wanted, false
	born := time.Now()
	nextSync := born.Add(every)
	for {
		select {
		case <-c.stop:
			return
		case <-synced:
			inFlight = false
			continue
		case <-wanted:
			wanted, syncing = nil, true
			nextSync = born.Add(every)
		case <-wake.C:
		}
		if nt := c.Contact().Timeout; nt != t && nt > 0 {
			t = nt
			every = keepaliveEvery(t)
			c.wire.setHandshake(handshakeLimit(t))
			if soon := time.Now().Add(every); soon.Before(nextSync) {
				nextSync = soon
			}
		}
		now := time.Now()
		c.dropIfSilent(now, t)
		c.sess.expireIfDown(now, t)
		c.giveUpIfRefused()
		if !syncing && !now.Before(nextSync) {
			// Nothing to send: wake as often anyway, for the checks
			// above.
			nextSync = now.Add(every)
		}
		if syncing && !now.Before(nextSync) {
			nextSync = now.Add(every)
			// Only on a connection that carries the session: a request
			// queued while there is none would go out with the
			// reconnect, and go-zookeeper reads the last zxid for its
			// set-watches packet while its receive loop already writes
			// it from that request's reply (a data race in the library,
			// reported by the race detector).
			if !inFlight && c.sess.isUp() {
				inFlight = true
				// The request cannot be cancelled; it ends with its
				// reply, or when Close flushes it.
				go func() {
					sent := time.Now()
					if _, err := c.conn.Sync(c.abs("/")); err == nil {
						// The tracker has read the reply already:
						// QuorumHeard counts it.
						c.quorum.syncedAt(sent)
					}
					synced <- struct{}{}
				}()
			}
		}
		// Wake for the next sync, or as soon as the server would turn
		// silent, whichever comes first.
		next := nextSync
		if since, rtt, _, ok := c.wire.quiet(); ok {
			if at := since.Add(silenceBound(t, rtt)); at.Before(next) {
				next = at.Add(time.Millisecond)
			}
		}
		wake.Reset(max(time.Until(next), time.Millisecond))
	}
}

// learnMode reads whether the server runs standalone (see quorum.go). It
// is the keepalive's first request, after the session is up, so it never
// delays a command.
func (c *Client) learnMode() {
	// No context: the read ends with the session, and must not be cut
	// short while it lives.
	if alone, err := c.Standalone(context.Background()); err == nil && alone {
		c.wire.mu.Lock()
		c.wire.standalone = true
		c.wire.mu.Unlock()
	}
}

// Standalone reads whether the server runs alone, with no ensemble and
// so no leader election: its /zookeeper/config names no servers (see
// quorum.go). A server too old to publish that node (before 3.5) counts as
// a member of an ensemble, where an election may come.
func (c *Client) Standalone(ctx context.Context) (bool, error) {
	data, err := call(ctx, func() ([]byte, error) {
		data, _, err := c.conn.Get(configNode)
		return data, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, c.wrap(OpRead, configNode, err)
	}
	return standaloneConfig(data), nil
}

// maxRefusals is how many connections in a row may carry the session and
// end without a single reply before the session counts as refused.
const maxRefusals = 3

// giveUpIfRefused ends the session when the server keeps taking it back
// and closing the connection without answering (see trackedConn.ended):
// every request would fail as a dropped connection and be retried
// forever.
func (c *Client) giveUpIfRefused() {
	c.wire.mu.Lock()
	n, auth := c.wire.refusals, c.wire.authRequired
	c.wire.mu.Unlock()
	if auth {
		c.sess.fail(errSessionRequiresAuth)
		return
	}
	if n >= maxRefusals {
		c.sess.fail(fmt.Errorf("%w: %s closed the connection %d times in a row before answering any request; it may require authentication (enforce.auth)",
			ErrPermission, c.conn.Server(), n))
	}
}

// errSessionRequiresAuth is the server's own error for a session it closed
// for want of authentication, in the form go-zookeeper gives codes it has
// no name for, so that OpError words it like the reply itself.
var errSessionRequiresAuth = fmt.Errorf("%s%d", codeUnknownPrefix, codeSessionRequiresAuth)

// configNode is where a server publishes its ensemble's membership. It is
// outside any chroot.
const configNode = "/zookeeper/config"

// dropIfSilent closes the current connection if a request has waited for
// its reply while the server sent nothing for longer than the connection's
// silence bound (silenceBound) under the session timeout t.
func (c *Client) dropIfSilent(now time.Time, t time.Duration) {
	since, rtt, conn, ok := c.wire.quiet()
	if !ok || now.Sub(since) <= silenceBound(t, rtt) {
		return
	}
	if conn.drop() {
		c.debugf(silentFormat, c.conn.Server(), now.Sub(since).Round(time.Millisecond))
	}
}

// silentFormat is the -v line for a connection dropped as silent.
const silentFormat = "%s silent for %s: moving to another server"

// drop closes the connection once; it reports whether this call closed it.
func (c *trackedConn) drop() bool {
	c.mu.Lock()
	first := !c.dropped
	c.dropped = true
	c.mu.Unlock()
	if first {
		_ = c.Conn.Close()
	}
	return first
}
