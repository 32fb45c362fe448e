package robust

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// RuleSupersede is a `--supersede` queue breaking its promise.
const RuleSupersede = "supersede"

// Superseder is what a superseded zklock says of the contender that made
// it leave: its host and pid, and its order key when it gave one.
type Superseder struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	Key  *int64 `json:"key,omitempty"`
}

// supersededLine matches zklock's reason for leaving a superseding queue
// (internal/recipe's SupersededError).
var supersededLine = regexp.MustCompile(`superseded by a (?:newer contender|contender with order key (-?[0-9]+)) on (\S+) pid ([0-9]+)`)

// ParseSuperseded reads a superseded zklock's stderr: nil when it does
// not say it was superseded.
func ParseSuperseded(stderr string) *Superseder {
	m := supersededLine.FindStringSubmatch(stderr)
	if m == nil {
		return nil
	}
	pid, _ := strconv.Atoi(m[3])
	by := &Superseder{Host: m[2], PID: pid}
	if m[1] != "" {
		k, err := strconv.ParseInt(m[1], 10, 64)
		if err == nil {
			by.Key = &k
		}
	}
	return by
}

// checkSupersede judges a `--supersede` queue, on every run of the path
// (docs/guide/run.md):
//
//   - a superseded waiter exits 75 with the outcome superseded, and its
//     command never runs;
//   - it names a contender of the path that was started before it left,
//     and whose order key is at least its own: among waiters the highest
//     key survives, an equal key (a retry) takes the place, and a run
//     whose key is below the waiter's is the one that leaves.
//
// That the queue holds at most one waiter is not judged here: a run's
// joining is not recorded, only its start. What follows from it is: the
// waiter that leaves names the newer one, and exclusion holds.
func (r *Result) checkSupersede(p Path, runs []Run) {
	for _, run := range runs {
		by := run.SupersededBy
		if run.Killed || by == nil && run.Outcome != "superseded" {
			continue
		}
		if by == nil {
			r.add(Violation{Rule: RuleSupersede, Path: p.Name, Runs: []string{run.ID}, At: run.Exited,
				Detail: fmt.Sprintf("%s exited with outcome superseded but named no contender: %s", run.ID, run.Stderr)})
			continue
		}
		if run.Exit != 75 || run.Life != nil || run.Outcome != "" && run.Outcome != "superseded" {
			r.add(Violation{Rule: RuleSupersede, Path: p.Name, Runs: []string{run.ID}, At: run.Exited,
				Detail: fmt.Sprintf("%s was superseded but exited %d, outcome %q, and its command ran: %t", run.ID, run.Exit, run.Outcome, run.Life != nil)})
		}
		var newer *Run
		for i := range runs {
			if runs[i].PID == by.PID && runs[i].Host == by.Host && runs[i].ID != run.ID &&
				runs[i].Invoked <= run.Exited && runs[i].Exited >= run.Invoked {
				newer = &runs[i]
			}
		}
		switch {
		case newer == nil:
			r.add(Violation{Rule: RuleSupersede, Path: p.Name, Runs: []string{run.ID}, At: run.Exited,
				Detail: fmt.Sprintf("%s was superseded by pid %d on %s, which no contender of %s alive then was", run.ID, by.PID, by.Host, p.Name)})
		case run.OrderKey != nil && newer.OrderKey != nil && *newer.OrderKey < *run.OrderKey:
			r.add(Violation{Rule: RuleSupersede, Path: p.Name, Runs: []string{run.ID, newer.ID}, At: run.Exited,
				Detail: fmt.Sprintf("%s (order key %d) left for %s, whose key %d is lower, %s before it exited",
					run.ID, *run.OrderKey, newer.ID, *newer.OrderKey, time.Duration(run.Exited-newer.Invoked))})
		case by.Key != nil && newer.OrderKey != nil && *by.Key != *newer.OrderKey:
			r.add(Violation{Rule: RuleSupersede, Path: p.Name, Runs: []string{run.ID, newer.ID}, At: run.Exited,
				Detail: fmt.Sprintf("%s names order key %d for %s, which ran with key %d", run.ID, *by.Key, newer.ID, *newer.OrderKey)})
		}
	}
}
