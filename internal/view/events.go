package view

import (
	"fmt"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/runner"
)

// The sentences of a run's events, which -v prints and the JSON events
// carry as their msg: one wording for both.

// Overlap words a loss acted on too late: what may have happened, by
// how much, and what to check.
func Overlap(e runner.PossibleOverlap) string {
	return fmt.Sprintf("possible overlap on %s: the command still ran %s after its session could have expired (session timeout %s), "+
		"so the next holder may have started beside it: check what ZKLOCK_FENCING_TOKEN guards", e.Path, e.Late.Round(time.Millisecond), e.Timeout)
}

// Acquired says a lock is held, as -v and the acquired event say it.
func Acquired(e runner.Acquired) string {
	if e.Reentered {
		return fmt.Sprintf("re-entered %s, held by an ancestor zklock as %s", e.Path, e.Node)
	}
	return fmt.Sprintf("acquired %s as %s after %s", e.Path, e.Node, e.Wait.Round(time.Millisecond))
}

// Released says the locks are given back, as -v and the released event
// say it.
func Released(e runner.Released) string {
	if !e.Confirmed {
		return fmt.Sprintf("released %s, unconfirmed: the server drops it when the session expires", strings.Join(e.Paths, " "))
	}
	return fmt.Sprintf("released %s (%s)", strings.Join(e.Paths, " "), e.How)
}

// WaitSentence says where a wait stands, without times: "waiting for
// /locks/x, position 2, held by deploy@web-3 pid 81233 (./report.sh)".
// What others wrote in it is escaped by the caller.
func WaitSentence(st runner.WaitStatus) string {
	s := fmt.Sprintf("waiting for %s, position %d", st.Path, st.Position)
	if h := st.Holder; h != nil {
		s += ", held by " + Who(h.Contender, h.NodeData)
	}
	return s
}
