package runner

import "time"

// Budget is how zklock spends the negotiated session timeout T once it stops
// hearing from ZooKeeper while the command runs.
//
// The server cannot expire the session before LastHeard+T, where LastHeard
// is the send time of the last request that got a reply (any reply proves
// the server read the request, so its expiry clock was reset no earlier than
// that). Measuring from the reply, or from go-zookeeper's disconnect event,
// would be wrong: go-zookeeper only notices a silent server after 2/3·T, and
// the server may have last heard from us up to a ping interval (T/3) before
// the last reply arrived. So, all counted from LastHeard:
//
//	Deadline = T − Grace − Margin   SIGTERM to the command's process group
//	Deadline + Grace = T − Margin   SIGKILL to whatever is left
//	T                               earliest moment the server can expire
//	                                the session and the next waiter can start
//
// Grace is the user's --kill-grace, capped at T/4 for a lost lock, so that
// the deadline stays far above the ping interval (T/3) and a healthy session
// never trips it: Deadline ≥ T − T/4 − T/10 = 0.65·T. Margin is T/10, at
// least 100ms: it covers timer and scheduling delay, SIGKILL delivery and
// the kernel tearing the processes down, and the two machines' clocks
// running at slightly different rates. The server rounds expiry up to its
// next tick, and a leader change restarts every session's clock, which only
// add slack on the safe side.
//
// Example, T = 10s, --kill-grace 5s: Grace = 2.5s, Margin = 1s, SIGTERM 6.5s
// after the last contact, SIGKILL at 9s, expiry no earlier than 10s.
type Budget struct {
	Timeout  time.Duration // T, the negotiated session timeout
	Deadline time.Duration // silence after which the lock counts as lost
	Grace    time.Duration // SIGTERM → SIGKILL for a lost lock
	Margin   time.Duration // left between SIGKILL and the earliest expiry
}

// minMargin keeps a usable margin for the shortest session timeouts a
// server allows (2 ticks: 4s by default, less on test servers).
const minMargin = 100 * time.Millisecond

// NewBudget computes the budget for a negotiated timeout and the kill grace
// the user asked for.
func NewBudget(timeout, killGrace time.Duration) Budget {
	b := Budget{Timeout: timeout, Grace: killGrace, Margin: max(timeout/10, minMargin)}
	if b.Grace > timeout/4 {
		b.Grace = timeout / 4
	}
	b.Deadline = timeout - b.Grace - b.Margin
	return b
}
