package zkconn

import (
	"bytes"
	"time"

	"github.com/zklock/zklock/internal/jute"
)

// # When is a session certainly alive on the leader?
//
// A lock holder must stop its command before the ensemble can expire its
// session and give the lock to the next waiter. Only the leader expires
// sessions: it restarts a session's clock (SessionTracker.touchSession)
// and expires it T (the negotiated timeout) after the last touch. So the
// holder needs a lower bound on the leader's last touch, and any reply
// from the server it happens to be connected to is not one. These facts
// are read from ZooKeeper's server (3.8, the version the tests run):
//
//  1. A follower (or observer) answers pings and reads from its own state
//     and touches the session only in its own table. It passes the
//     sessions it touched to the leader in its reply to the leader's next
//     ping (Learner.ping, LearnerHandler's PING case calls touch), and the
//     leader pings every learner every tickTime/2 (Leader.lead). A
//     follower cut off from the leader goes on answering its clients until
//     its read from the leader times out, syncLimit × tickTime later,
//     while the leader stops hearing of the session at once.
//  2. A sync, and every write, is forwarded to the leader, which checks
//     the session there (PrepRequestProcessor: checkSession fails for an
//     expired or closing session) before it answers; the reply comes back
//     through the follower. The forwarded request travels on the same
//     ordered TCP stream as the follower's ping replies.
//  3. Creating a session, and resuming one on another server, goes to the
//     leader: the resume is a REVALIDATE, and the leader answers it by
//     touching the session (LeaderZooKeeperServer.checkIfValidGlobalSession
//     calls touchSession). A client connected to the leader itself touches
//     the session directly with every request.
//  4. The server clamps T to [2, 20] × tickTime, so tickTime/2 ≤ T/4.
//
// The rules that follow:
//
//   - A successful ConnectResponse certifies its request's send time (3).
//   - A successful sync or write B certifies the send time of the latest
//     earlier request A on the same connection whose reply arrived at least
//     T/4 before B was sent. A reached the server before its reply left,
//     so the server touched the session for A at least T/4 before it
//     forwarded B; the leader pings every tickTime/2 ≤ T/4, so the server
//     answered a ping, listing the session, in between, and that ping
//     reply went to the leader ahead of B on the same stream (1, 2, 4).
//     The leader answered B, so it read the ping reply and restarted the
//     session's clock, on its own time, no earlier than A was sent.
//     B never vouches for itself: its own touch may still be waiting for
//     the next ping reply when the link to the leader breaks.
//   - Nothing else counts: a ping or a read can be answered by a server
//     that lost the leader long ago.
//   - Except on a standalone server, which is its own leader: there every
//     reply certifies its own request. A server runs standalone when its
//     /zookeeper/config names no servers; the keepalive reads it once, and
//     until then (or if it cannot be read: servers before 3.5 lack it) the
//     rules for an ensemble apply.
//
// The certified time lags real time by T/4 plus the gap between requests;
// the session's keepalive (keepalive.go) sends a sync every T/20 so that
// the lag stays near 0.35·T (internal/runner/budget.go spends the rest of
// T).
//
// A leader cut off from the quorum also answers syncs by itself, until it
// notices, within (syncLimit+1) × tickTime; the majority elects a new
// leader, which restarts every session's clock when it starts, no sooner
// than syncLimit × tickTime − tickTime/2 after the cut. The T/4 lag and the
// margin cover that gap of up to 1.5 ticks as long as T is at least about
// five ticks (ZooKeeper's default tickTime is 2 s; zklock asks for 10 s).

// completion is a request that got its reply.
type completion struct {
	sent, replied time.Time
}

// maxAnswered bounds the history a connection keeps for certification. At
// one request every T/20 plus go-zookeeper's pings, a few dozen entries
// cover more than the T/4 look-back.
const maxAnswered = 64

// remember records a reply; the caller holds c.mu.
func (c *trackedConn) remember(x completion) {
	if len(c.answered) == maxAnswered {
		copy(c.answered, c.answered[1:])
		c.answered = c.answered[:maxAnswered-1]
	}
	c.answered = append(c.answered, x)
}

// certified is what a successful sync or write sent at sent certifies (the
// zero time for nothing); the caller holds c.mu.
func (c *trackedConn) certified(sent time.Time) time.Time {
	// The bound tickTime/2 ≤ T/4 holds for the T that this connection's
	// server granted (fact 4).
	c.t.mu.Lock()
	t := c.t.to.granted
	c.t.mu.Unlock()
	if t <= 0 {
		return time.Time{}
	}
	cutoff := sent.Add(-t / 4)
	for i := len(c.answered) - 1; i >= 0; i-- {
		if !c.answered[i].replied.After(cutoff) {
			return c.answered[i].sent
		}
	}
	return time.Time{}
}

// throughLeader reports whether the leader answers requests of this kind
// itself, after checking the session (fact 2).
func throughLeader(opcode int32) bool {
	switch opcode {
	case jute.OpSync, jute.OpCreate, jute.OpDelete, jute.OpSetData, jute.OpSetACL, jute.OpMulti,
		jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		return true
	}
	return false
}

// standaloneConfig reports whether the content of /zookeeper/config
// describes a server running alone: an ensemble's lists its members as
// server.N lines.
func standaloneConfig(data []byte) bool {
	return !bytes.Contains(data, []byte("server."))
}
