package runner

import "time"

// Budget is how a lock holder spends the session timeout T once the
// ensemble stops confirming its session.
//
// T is the timeout that the session's expiry counts with now (zkconn's
// Contact.Timeout). Each reconnect negotiates it again: a smaller one
// applies at once, a larger one only once the quorum has confirmed it
// (zkconn/timeout.go), and the guard recomputes the budget at every change
// (guard.go). Everything is counted from the client's QuorumHeard: the
// latest moment the leader is known to have restarted the session's clock
// (see zkconn/quorum.go). Counting from any reply would be wrong, since a
// server cut off from its leader goes on answering pings for syncLimit ×
// tickTime while the leader's clock for the session runs out. So, from
// QuorumHeard:
//
//	Deadline = T − Grace − Teardown − Margin   SIGTERM to the command's group
//	Deadline + Grace = T − Teardown − Margin   SIGKILL to whatever is left
//	T                                          earliest moment the leader can
//	                                           expire the session and the
//	                                           next waiter can start
//
// QuorumHeard trails real time by up to about 0.35·T on a healthy ensemble
// (the session's keepalive syncs every T/20, and each sync certifies a
// request at least T/4 older). The syncs start when the run is next in
// line (zkconn's KeepQuorumHeard); in their first T/4 a sync can certify
// no more than a ping, and the lag is up to T/4 + T/3 (go-zookeeper pings
// every T/3), still short of the Deadline below. Grace is the user's --kill-grace capped at
// T/5 less Teardown, so Deadline ≥ 0.7·T leaves at least 0.35·T of silence before the
// command is disturbed: room for the keepalive to notice a silent server
// and resume the session on another one. The keepalive waits for the
// larger of T/10 and, on a slow link, 2·(SRTT + 4·RTTVAR) + 200ms of
// quiet (zkconn/roundtrip.go): on a steady round trip R, the next sync
// (T/20), that wait and a resume (R) fit in 0.35·T while
// R ≤ T/10 − 70ms (930ms at T = 10s, 330ms at T = 4s). On a slower link
// a live connection still keeps the lock; only a server that falls
// silent can no longer be left in time, and the deadline still stops the
// command before T (the budget counts from QuorumHeard, never from the
// keepalive's view). Margin is T/10, at least
// 100ms: it covers timer and scheduling delay, SIGKILL delivery, and the
// two machines' clocks running at slightly different rates. Teardown is
// the time a SIGKILLed group takes to be gone, measured (killTeardown),
// kept apart so that no T leaves less of it. The leader rounds expiry up to its next
// tick, and a leader change restarts every session's clock, which only add
// slack on the safe side.
//
// Example, T = 10s, --kill-grace 5s: Grace = 1.9s, Teardown = 100ms,
// Margin = 1s, SIGTERM 7s after QuorumHeard, SIGKILL at 8.9s, expiry no
// earlier than 10s.
//
// The watchdog (lockexec) enforces the same budget should zklock stop
// running, Lead behind zklock: a zklock that runs on time stops the
// command itself and says why. At the same instant, the watchdog won the
// race as often as not under load, and a plain loss of contact was
// reported as "was zklock stopped or starved?". The lead never comes out
// of the margin: with a grace, the watchdog's SIGTERM trails zklock's by
// Lead = min(Grace/4, 250ms) and its SIGKILL is zklock's; with no grace
// (--kill-grace 0: SIGKILL at once), zklock's deadline moves Lead =
// min(Margin/4, 250ms) earlier, and the watchdog's SIGKILL is at T − Teardown − Margin.
type Budget struct {
	Timeout  time.Duration // T, the session timeout in effect
	Deadline time.Duration // time after QuorumHeard at which the lock counts as lost
	Grace    time.Duration // SIGTERM → SIGKILL for a lost lock
	Teardown time.Duration // after the last SIGKILL, for the kernel to tear the group down
	Margin   time.Duration // left beyond Teardown before the earliest expiry
	Lead     time.Duration // by which zklock acts before its watchdog
}

// minMargin keeps a usable margin for the shortest session timeouts a
// server allows (2 ticks: 4s by default, less on test servers).
const minMargin = 100 * time.Millisecond

// killTeardown is how long a SIGKILLed process group takes to be gone:
// the kernel unmaps and frees every page of every member before the
// leader can be reaped. Measured on a loaded 2-core host (the suite, its
// servers and 16 CPU hogs beside it), a tree holding 10 MiB took 8 to
// 86 ms from kill(2) to its leader reaped. It grows with the memory the
// command holds: a tree of 1 GiB took 0.17 to 2.2 s on the same host, and
// 4 GiB 5.9 to 7.7 s, which no fixed allowance of a session timeout
// covers; such a kill is found late and reported (late.go).
const killTeardown = 100 * time.Millisecond

// watchdogLag bounds Lead: enough for a zklock delayed by a loaded
// machine's scheduler, short beside any grace or margin.
const watchdogLag = 250 * time.Millisecond

// NewBudget computes the budget for a negotiated timeout and the kill grace
// the user asked for.
func NewBudget(timeout, killGrace time.Duration) Budget {
	b := Budget{Timeout: timeout, Teardown: killTeardown, Margin: max(timeout/10, minMargin)}
	// The teardown comes out of the grace, not the deadline: the command
	// is disturbed no sooner than before.
	b.Grace = max(min(killGrace, timeout/5-b.Teardown), 0)
	b.Deadline = timeout - b.Grace - b.Teardown - b.Margin
	if b.Grace > 0 {
		b.Lead = min(b.Grace/4, watchdogLag)
	} else {
		b.Lead = min(b.Margin/4, watchdogLag)
		b.Deadline -= b.Lead
	}
	return b
}

// Stop and Kill are the moments, for a given QuorumHeard, at which a
// holder's command must be sent SIGTERM and SIGKILL.
func (b Budget) Stop(quorumHeard time.Time) time.Time { return quorumHeard.Add(b.Deadline) }

// WatchdogStop and WatchdogKill are the watchdog's moments for the same
// QuorumHeard: Lead after zklock's SIGTERM, and never before zklock's
// SIGKILL.
func (b Budget) WatchdogStop(quorumHeard time.Time) time.Time {
	return b.Stop(quorumHeard).Add(b.Lead)
}

// WatchdogKill: see WatchdogStop.
func (b Budget) WatchdogKill(quorumHeard time.Time) time.Time {
	kill, stop := b.Kill(quorumHeard), b.WatchdogStop(quorumHeard)
	if kill.After(stop) {
		return kill
	}
	return stop
}

// Left is what zklock's SIGKILL leaves before the earliest expiry: the
// teardown and the margin, and the watchdog's lead without a grace.
func (b Budget) Left() time.Duration { return b.Timeout - b.Deadline - b.Grace }

// Kill: see Stop.
func (b Budget) Kill(quorumHeard time.Time) time.Time {
	return quorumHeard.Add(b.Deadline + b.Grace)
}
