package zkconn

import "time"

// # Which session timeout does the leader apply?
//
// The leader expires a session T after its last touch of it (quorum.go),
// and T is not fixed for the life of a session. These facts are read from
// ZooKeeper's server (3.8, the version the tests run):
//
//  1. Every connect negotiates T anew. ZooKeeperServer.processConnectRequest
//     clamps the client's request to that server's own [minSessionTimeout,
//     maxSessionTimeout] and keeps the result on the connection
//     (cnxn.setSessionTimeout); a rolling restart that changes those bounds
//     changes T under a running session.
//  2. Resuming a session on a follower sends REVALIDATE(session, T) to the
//     leader (Learner.validateSession). The leader answers it with
//     checkIfValidGlobalSession, which calls touchSession(session, T): the
//     session's expiry becomes now + T on the leader's clock
//     (SessionTrackerImpl.touchSession, ExpiryQueue.update). Only on the
//     leader's answer does the follower send the ConnectResponse
//     (Learner.revalidate, finishSessionInit). On the leader itself the
//     resume touches the session directly. So a ConnectResponse proves
//     that the leader applied the granted T, and no earlier than its
//     ConnectRequest was sent.
//  3. After that every touch carries the T of the connection it came
//     from: a follower records each touch with cnxn.getSessionTimeout()
//     (ZooKeeperServer.touch, LearnerSessionTracker.touchSession) and lists
//     session and T in its next ping reply; the leader touches each with
//     the T listed (LearnerHandler, case PING). A touch replaces the
//     expiry, earlier or later: the latest touch's T decides.
//  4. A follower the session has just left may still hold a touch with the
//     old T, from the session's last request there, and pass it on in its
//     next ping reply, within tickTime/2 ≤ T/4 (quorum.go, fact 4): that
//     stale touch can reach the leader after the REVALIDATE.
//  5. A newly elected leader tracks every session with the T it was
//     created with: the CreateSessionTxn records it, nothing ever updates
//     it (DataTree and FileTxnSnapLog keep sessionsWithTimeouts from the
//     create alone), and the new leader's SessionTrackerImpl starts every
//     session's clock with it. The followers close their clients'
//     connections when the leader changes, so every session then resumes
//     with a REVALIDATE at the T its new server grants.
//
// The rules that follow, for the T that the deadlines count with:
//
//   - A T that shrank applies at once, from the ConnectRequest's send time,
//     which the ConnectResponse certifies (2). A stale touch (4) or a new
//     leader (5) only brings back a larger T, which moves expiry later.
//   - A T that grew is trusted no further than the T the session was
//     created with: any election takes the leader back to that (5).
//   - Up to that, a grown T is trusted once QuorumHeard certifies a request
//     sent at least T_old/4 after the ConnectRequest. By then the server
//     the session left has passed on its stale touch (4); the sync that
//     certifies the request proves that the leader took a touch from the
//     new server, with the new T, after the request was sent (quorum.go).
//     Until then the old, smaller T stays in effect.
//
// One case no client can bound: a ConnectRequest whose ConnectResponse
// never arrives (the connection dies in that round trip) may still have
// been revalidated, with a T the client never learns. The deadlines keep
// the T in effect; they are wrong only if that server's bound was lower
// and then no server is reached again before the session expires.

// timeouts follows the session timeout through reconnects. The tracker's
// lock guards it.
type timeouts struct {
	created   time.Duration // granted when the session was created
	granted   time.Duration // granted on the latest connect
	effective time.Duration // what the deadlines count with
	// pending is a grown T not trusted yet, 0 for none; it takes effect
	// once QuorumHeard reaches after.
	pending time.Duration
	after   time.Time
}

// connected records a ConnectResponse that granted T to a ConnectRequest
// sent at sent; resumed says the request resumed an existing session.
func (x *timeouts) connected(granted time.Duration, resumed bool, sent time.Time) {
	x.granted = granted
	if !resumed || x.created == 0 {
		x.created, x.effective, x.pending = granted, granted, 0
		return
	}
	target := min(granted, x.created)
	if target <= x.effective {
		x.effective, x.pending = target, 0
		return
	}
	x.pending, x.after = target, sent.Add(x.effective/4)
}

// certified applies a pending T once QuorumHeard has reached its moment;
// it reports whether the T in effect changed.
func (x *timeouts) certified(quorumHeard time.Time) bool {
	if x.pending == 0 || quorumHeard.Before(x.after) {
		return false
	}
	x.effective, x.pending = x.pending, 0
	return true
}
