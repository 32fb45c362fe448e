package zkconn

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/jute"
)

// # A session the ensemble no longer has
//
// An ensemble restored from an older copy of its data, or wiped, no longer
// has the state this client saw, and perhaps not its session at all; it
// admits fresh clients at once, and one of them can take the lock this
// client holds. The client must count that as a lost lock at once, not as
// silence, and must not mistake a merely lagging follower of a healthy
// ensemble for it. These facts are read from ZooKeeper's server (3.8):
//
//  1. A server refuses to resume a session for a client whose last zxid
//     is ahead of its own: processConnectRequest throws a
//     CloseRequestException (CLIENT_ZXID_AHEAD, "has seen zxid 0x… our
//     last zxid is 0x… client must try another server") and closes the
//     connection without a ConnectResponse. go-zookeeper sends its last
//     zxid on every reconnect and then tries the next server. A follower
//     that lags does this in a healthy ensemble too: it catches up, since
//     committed transactions are never lost. A restored or wiped ensemble
//     never does, and all its servers refuse.
//  2. That check is the only use of the client's zxid in a ConnectRequest:
//     a resume that sends 0 is never refused for it.
//  3. A server that does not know the session (it expired, or was lost
//     with the state) answers a resume with a ConnectResponse for session
//     0 (ZooKeeperServer.finishSessionInit with valid false).
//  4. Every reply header carries the server's lastProcessedZxid when it
//     replied (FinalRequestProcessor). A sync is answered after the server
//     has applied every transaction the leader had committed when it took
//     the sync (Leader.processSync waits for the proposals in flight), and
//     every zxid ever shown to a client was committed first.
//
// So when a server closes a resume without answering it, the client
// probes: it resumes the session on a connection of its own to that
// server, with last zxid 0 (2), then syncs and reads the reply's zxid (4).
//
//   - A ConnectResponse for session 0: the ensemble does not have the
//     session (3). It is lost.
//   - A zxid after the sync below the highest one this client has seen in
//     any reply: the ensemble's committed history is older than what this
//     client saw (4). The state it held is gone: lost.
//   - Otherwise the server lagged, or refused for another reason (not
//     serving yet, a connection cap): nothing is concluded.
//
// Neither can happen on a healthy ensemble: it knows a live session (3),
// and after a sync its zxid is at least every zxid it ever showed (4).
//
// The probe's resume is a real one. Like any, it touches the session on
// the leader, and so certifies its send time with the timeout that server
// grants (quorum.go, timeout.go). It also makes the probe's server the
// session's owner on the leader (Leader.revalidateSession calls setOwner),
// and the leader then refuses the session's requests through any other
// server as moved: so go-zookeeper's own reconnect waits while a probe
// runs (Client.dialer), and resumes after it, which moves the session back.

// probes runs one probe at a time.
type probes struct {
	mu      sync.Mutex
	running chan struct{}        // closed when the probe running ends; nil if none
	last    map[string]time.Time // when each server was last probed
}

// probeEvery is how often one server is probed at most: a lagging
// follower that refuses again and again is not probed at every attempt.
const probeEvery = time.Second

// wait returns once no probe runs, or ErrClosed once done is closed.
func (p *probes) wait(done <-chan struct{}) error {
	p.mu.Lock()
	running := p.running
	p.mu.Unlock()
	if running == nil {
		return nil
	}
	select {
	case <-running:
		return nil
	case <-done:
		return ErrClosed
	}
}

// start claims the right to probe address; it returns nil if a probe
// runs, or address was probed within probeEvery.
func (p *probes) start(address string, now time.Time) (end func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running != nil || now.Sub(p.last[address]) < probeEvery {
		return nil
	}
	if p.last == nil {
		p.last = map[string]time.Time{}
	}
	p.last[address] = now
	running := make(chan struct{})
	p.running = running
	return func() {
		p.mu.Lock()
		p.running = nil
		p.mu.Unlock()
		close(running)
	}
}

// probeLimit bounds a probe: a connect, a resume the server asks its
// leader about, and a sync through the leader.
func probeLimit(t time.Duration) time.Duration {
	return max(2*handshakeLimit(t), time.Second)
}

// probeRefusal starts a probe of address, whose server closed a resume
// of the session without answering it. It is called on go-zookeeper's
// path, before its next dial, which then waits for the probe to end.
func (c *Client) probeRefusal(address string) {
	if c.closed.Load() || !c.sess.established() || c.LostErr() != nil {
		return
	}
	end := c.probes.start(address, time.Now())
	if end == nil {
		return
	}
	go func() {
		defer end()
		if err := c.probe(address); err != nil {
			c.debugf("%s refused to resume session 0x%x: %v", address, c.SessionID(), err)
			c.sess.fail(err)
		}
	}()
}

// probe resumes the session on a connection of its own to address and
// returns an error wrapping ErrSessionLost if the ensemble does not have
// the session, or has an older state than this client saw; nil when
// nothing can be concluded.
func (c *Client) probe(address string) error {
	ctx, cancel := context.WithTimeout(context.Background(), probeLimit(c.Contact().Timeout))
	defer cancel()
	go func() { // ends with ctx, at the latest when probe returns
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	rc, closeRaw, err := c.dialRaw(ctx, address)
	if err != nil {
		return nil
	}
	defer closeRaw()
	c.wire.mu.Lock()
	session, passwd, seen := c.wire.session, c.wire.passwd, c.wire.maxZxid
	c.wire.mu.Unlock()
	sent := time.Now()
	granted, known, err := rc.resume(session, passwd, 0, c.opts.SessionTimeout)
	switch {
	case err != nil:
		return nil // refused this too: not serving, or a connection cap
	case !known:
		return fmt.Errorf("%w: the ensemble no longer has session 0x%x: %s refused to resume it, and does not know it (its data restored from an older copy, or wiped? or the session expired)",
			ErrSessionLost, session, address)
	}
	c.wire.resumedElsewhere(granted, sent)
	if err := rc.addAuth(c.opts.Auth); err != nil {
		return nil
	}
	zxid, code, _, err := rc.request(jute.OpSync, pathBody("/"))
	if err != nil || code != 0 {
		return nil
	}
	if zxid >= seen {
		c.debugf("%s refused to resume session 0x%x, but knows it and is at zxid 0x%x after a sync (this client saw 0x%x): it lagged behind",
			address, session, zxid, seen)
		return nil
	}
	return fmt.Errorf("%w: the ensemble's state is older than this session has seen: after a sync %s is at zxid 0x%x, and this client saw 0x%x (its data restored from an older copy, or wiped?)",
		ErrSessionLost, address, zxid, seen)
}
