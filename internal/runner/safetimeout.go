package runner

import "time"

// # The smallest safe session timeout
//
// The budget (budget.go) stops the command when the quorum has not
// confirmed the session for Deadline = T − Grace − Teardown − Margin. A holder whose
// session is alive must never get there, and the longest such silence
// comes with a leader election: the old leader is gone, the servers refuse
// connections until a new one serves, and the session resumes (a new
// touch on the new leader, certified by the ConnectResponse) only after
// that. Adding up what the holder cannot avoid:
//
//   - the lag of QuorumHeard behind real time before the election
//     (quorum.go): a sync certifies requests answered at least T/4 before
//     it was sent, and the keepalive sends one every max(T/20, RTT) (one
//     at a time), so at worst T/4 + 2·max(T/20, RTT) + 2·RTT;
//   - the election itself: ElectionAllowance;
//   - the reconnect once a server serves again: a TCP connect and the
//     ConnectRequest, 2·RTT (4·RTT over TLS, whose handshake adds two).
//
// T is safe when Deadline exceeds that sum. With the default kill grace
// (Grace = T/5, Margin = T/10, so Deadline = 0.7·T) and RTT ≤ T/20 it
// reads 0.35·T > ElectionAllowance + 4·RTT (6·RTT over TLS): 7.8 s on a
// local network, 11.2 s at a 300 ms round trip.

// ElectionAllowance is the leader election that a holder is meant to ride
// out, from the old leader's end to the moment a server takes the
// session's resume. With ZooKeeper's stock timing (tickTime 2 s) a new
// leader serves within about 1 s; go-zookeeper, once every server of the
// connect string has turned it away, pauses 1 s before its next round,
// and a round can begin before the election ends. Measured on a local
// 3-server ensemble with stock timing: 20 holders keep their locks
// through 5 leader restarts at T = 8 s (3 runs of 3), and some lose them
// at 7 s and 6 s (docs/guide/lock-loss.md); 2.7 s puts the smallest safe
// T between the two.
const ElectionAllowance = 2700 * time.Millisecond

// syncDivisor is the keepalive's sync interval as a fraction of T
// (zkconn's keepalive).
const syncDivisor = 20

// safeStep is the precision of SafeTimeout: a round figure to suggest.
const safeStep = 100 * time.Millisecond

// maxSafeTimeout ends the search: beyond it the round trip, not the
// session timeout, is the problem.
const maxSafeTimeout = time.Hour

// SafeTimeout is the smallest session timeout, rounded up to a tenth of a
// second, whose budget rides out a leader election of ElectionAllowance
// over a connection with round trip rtt (TLS adds two round trips to a
// reconnect), for the kill grace given: see the derivation above.
func SafeTimeout(rtt time.Duration, tls bool, killGrace time.Duration) time.Duration {
	return smallestTimeout(rtt, tls, killGrace, ElectionAllowance)
}

// LinkTimeout is the smallest session timeout whose budget survives the
// link alone: the lag and a reconnect over round trip rtt, with no
// election. Below it, a slow reply or a move to another server may stop a
// command whose session is alive on an ensemble that never changes
// leader; between it and SafeTimeout only an election can. run warns of
// the first at every start and leaves the second to -v and doctor: a
// short timeout is a legitimate choice on a local network (a faster
// handoff when a holder dies, paid for by a command stopped during an
// election), and a warning on every run of such a job would fill the
// mail of every cron job that made it.
func LinkTimeout(rtt time.Duration, tls bool, killGrace time.Duration) time.Duration {
	return smallestTimeout(rtt, tls, killGrace, 0)
}

// smallestTimeout searches for the smallest T whose deadline exceeds the
// lag, an election of the length given and the reconnect.
func smallestTimeout(rtt time.Duration, tls bool, killGrace, election time.Duration) time.Duration {
	reconnect := 2 * rtt
	if tls {
		reconnect = 4 * rtt
	}
	for t := safeStep; t < maxSafeTimeout; t += safeStep {
		lag := t/4 + 2*max(t/syncDivisor, rtt) + 2*rtt
		if NewBudget(t, killGrace).Deadline > lag+election+reconnect {
			return t
		}
	}
	return maxSafeTimeout
}

// ShortTimeout says, once, after the first connect, that the session
// timeout in effect is below LinkTimeout for the round trip measured: a
// slow reply may then stop the command while ZooKeeper still keeps its
// lock, and so may a leader election (Safe, the timeout to ask for, rides
// out both).
type ShortTimeout struct {
	Timeout   time.Duration // the session timeout the server granted
	Asked     time.Duration // the one asked for
	RoundTrip time.Duration
	Safe      time.Duration // SafeTimeout
}

func (ShortTimeout) isEvent() {}
