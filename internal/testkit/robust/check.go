package robust

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Bounds are the checker's tolerances, derived by the runner from the
// session timeout T and what the workloads do, never tuned to a machine.
type Bounds struct {
	// Progress is how long after every fault has healed each path with a
	// waiter must show a command alive: a quiet window this long with
	// a waiter throughout and no holder is a liveness violation.
	Progress time.Duration
}

// Rules, as a violation names them.
const (
	RuleKernel    = "kernel-lock"   // the flock detector found a predecessor alive
	RuleExclusive = "exclusive"     // two exclusive holders' lifetimes overlap
	RuleReadWrite = "reader-writer" // a reader's lifetime overlaps a writer's
	RuleLimit     = "limit"         // more leases alive at once than the limit
	RuleFencing   = "fencing"       // tokens of one path not increasing in start order
	RuleOncePer   = "once-per"      // two successes within one window
	RuleProgress  = "progress"      // a path made no progress after the faults healed
	RuleExit      = "exit"          // an exit code no outcome explains
)

// Violation is one broken promise, with the runs that broke it.
type Violation struct {
	Rule   string   `json:"rule"`
	Path   string   `json:"path,omitempty"`
	Runs   []string `json:"runs,omitempty"`
	At     int64    `json:"at"`
	Detail string   `json:"detail"`
}

// Result is the checker's verdict and the counts the report shows.
type Result struct {
	Violations []Violation `json:"violations"`
	// Runs is every zklock run; Ran those whose command ran.
	Runs int `json:"runs"`
	Ran  int `json:"ran"`
	// Exits counts zklock's exit codes (-1: ended by a signal).
	Exits map[int]int `json:"exits"`
	// Losses are exits 76 of a command that ran, split by cause: Needed
	// (the server expired the session), Revoked (a `zklock revoke`), and
	// Needless (neither: zklock gave up a session the server still kept).
	Losses   int      `json:"losses"`
	Needed   int      `json:"needed"`
	Revoked  int      `json:"revoked"`
	Needless []string `json:"needless,omitempty"`
	// LossGaps are, for each holder that lost an exclusive lock, the time
	// from its command's last sign of life to its successor's first,
	// smallest first.
	LossGaps []time.Duration `json:"loss_gaps,omitempty"`
	// Faults counts the faults by kind.
	Faults map[string]int `json:"faults"`
	// Windows is how many quiet windows after a heal the progress rule
	// judged (a window cut short by the next fault is not judged).
	Windows int `json:"windows"`
}

// Check judges a history.
func Check(h History, b Bounds) Result {
	r := Result{Exits: map[int]int{}, Faults: map[string]int{}, Runs: len(h.Runs)}
	for _, f := range h.Faults {
		r.Faults[f.Kind]++
	}
	expired := map[string]bool{}
	for _, s := range h.Expired {
		expired[s] = true
	}
	for _, run := range h.Runs {
		r.Exits[run.Exit]++
		if run.Life != nil {
			r.Ran++
		}
		r.checkExit(run, expired)
	}
	for _, p := range h.Paths {
		runs := ranOn(h.Runs, p.Name)
		r.checkOverlap(p, runs)
		r.checkFencing(p, runs)
		if p.Kind == OncePer {
			r.checkOncePer(p, runs)
		}
		if p.Supersede {
			r.checkSupersede(p, on(h.Runs, p.Name))
		}
		if p.Kind == Pool {
			r.checkPool(p, runs)
		} else if p.Kind != Semaphore && p.Kind != ReadWrite {
			r.lossGaps(runs)
		}
		r.checkProgress(h, p, b)
	}
	slices.Sort(r.LossGaps)
	sort.SliceStable(r.Violations, func(i, j int) bool { return r.Violations[i].At < r.Violations[j].At })
	return r
}

// ranOn is the runs on path whose command ran, in the order they started.
func ranOn(runs []Run, path string) []Run {
	var out []Run
	for _, run := range runs {
		if run.Life != nil && slices.Contains(run.Paths, path) {
			out = append(out, run)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Life.First < out[j].Life.First })
	return out
}

// on is every run of path, whether its command ran or not.
func on(runs []Run, path string) []Run {
	var out []Run
	for _, run := range runs {
		if slices.Contains(run.Paths, path) {
			out = append(out, run)
		}
	}
	return out
}

// checkExit judges the exit code and classes a loss.
func (r *Result) checkExit(run Run, expired map[string]bool) {
	if run.Conflict {
		at := run.Invoked
		if run.Life != nil {
			at = run.Life.First // the moment it found its kernel lock taken
		}
		r.add(Violation{Rule: RuleKernel, Path: run.Paths[0], Runs: []string{run.ID}, At: at,
			Detail: fmt.Sprintf("%s could not take its kernel lock: another holder's command was still alive", run.ID)})
	}
	if run.Killed {
		return // the nemesis ended it; any code is its own doing
	}
	switch run.Exit {
	case 0:
		if run.Life == nil {
			r.add(Violation{Rule: RuleExit, Runs: []string{run.ID}, At: run.Exited,
				Detail: fmt.Sprintf("%s exited 0 but its command never ran", run.ID)})
		}
	case 69, 75:
	case 76:
		if run.Life == nil {
			return // a waiter revoked or lost before it ran
		}
		r.Losses++
		switch {
		case run.Revoked:
			r.Revoked++
		case expired[run.Session]:
			r.Needed++
		default:
			r.Needless = append(r.Needless, run.ID)
		}
	default:
		if run.Conflict || (run.Life != nil && run.Exit == run.CommandExit) {
			return // already the kernel detector's violation
		}
		r.add(Violation{Rule: RuleExit, Runs: []string{run.ID}, At: run.Exited,
			Detail: fmt.Sprintf("%s exited %d %s: %s", run.ID, run.Exit, run.Signal, run.Stderr)})
	}
}

// excludes reports whether a and b may not be alive at once on a path of
// kind k (a semaphore is judged by count, in checkOverlap).
func excludes(k Kind, a, b Role) bool {
	switch k {
	case Semaphore, Pool:
		return false
	case ReadWrite:
		return a == Writer || b == Writer
	}
	return true
}

// checkOverlap judges the recorded lifetimes: at each command's start, who
// else was alive.
func (r *Result) checkOverlap(p Path, runs []Run) {
	for i, cur := range runs {
		var alive []Run
		for j, other := range runs {
			if j != i && other.Life.First <= cur.Life.First && cur.Life.First <= other.Life.Last {
				// Ties on First are judged once, from the later index.
				if other.Life.First == cur.Life.First && j > i {
					continue
				}
				alive = append(alive, other)
			}
		}
		if p.Kind == Pool {
			continue // judged member by member (checkPool)
		}
		if p.Kind == Semaphore {
			if len(alive)+1 > p.Limit {
				ids := []string{cur.ID}
				for _, a := range alive {
					ids = append(ids, a.ID)
				}
				r.add(Violation{Rule: RuleLimit, Path: p.Name, Runs: ids, At: cur.Life.First,
					Detail: fmt.Sprintf("%d holders alive at once at %s, limit %d", len(ids), p.Name, p.Limit)})
			}
			continue
		}
		for _, other := range alive {
			if !excludes(p.Kind, cur.Role, other.Role) {
				continue
			}
			rule := RuleExclusive
			if p.Kind == ReadWrite && (cur.Role == Reader || other.Role == Reader) {
				rule = RuleReadWrite
			}
			r.add(Violation{Rule: rule, Path: p.Name, Runs: []string{other.ID, cur.ID}, At: cur.Life.First,
				Detail: fmt.Sprintf("%s (%s) started %s before %s (%s) last showed life",
					cur.ID, cur.Role, time.Duration(other.Life.Last-cur.Life.First), other.ID, other.Role)})
		}
	}
}

// checkFencing judges the tokens: on an exclusive path each holder's token
// is above every earlier holder's; on a read-write path a writer's is above
// everyone's before it and below everyone's after it (readers among
// themselves start in any order). A semaphore's leases are not ordered.
func (r *Result) checkFencing(p Path, runs []Run) {
	if p.Kind == Semaphore || p.Kind == Pool {
		return // a pool's tokens are its members' (checkPool)
	}
	for i := 1; i < len(runs); i++ {
		cur := runs[i]
		tc, ok := cur.Tokens[p.Name]
		if !ok {
			continue
		}
		for j := 0; j < i; j++ {
			prev := runs[j]
			tp, ok := prev.Tokens[p.Name]
			if !ok || (p.Kind == ReadWrite && cur.Role == Reader && prev.Role == Reader) {
				continue
			}
			if tp >= tc {
				r.add(Violation{Rule: RuleFencing, Path: p.Name, Runs: []string{prev.ID, cur.ID}, At: cur.Life.First,
					Detail: fmt.Sprintf("%s started after %s with token %d, not above %d", cur.ID, prev.ID, tc, tp)})
			}
		}
	}
}

// checkOncePer judges `--once-per`: a command that succeeded started at
// least a window after the last success recorded. A success zklock could
// not record (the ensemble lost in the write) starts no window: that costs
// a run the window would have skipped, by design.
func (r *Result) checkOncePer(p Path, runs []Run) {
	var last *Run
	for i := range runs {
		cur := &runs[i]
		if cur.Exit != 0 {
			continue
		}
		if last != nil {
			if d := time.Duration(cur.Life.First - last.Life.First); d < p.Window {
				r.add(Violation{Rule: RuleOncePer, Path: p.Name, Runs: []string{last.ID, cur.ID}, At: cur.Life.First,
					Detail: fmt.Sprintf("%s succeeded %s after %s, within the window of %s", cur.ID, d, last.ID, p.Window)})
			}
		}
		if !cur.Unrecorded {
			last = cur
		}
	}
}

// lossGaps measures, for each holder that lost the lock, the gap to the
// next holder: how much margin the loss left.
func (r *Result) lossGaps(runs []Run) {
	for i := 0; i+1 < len(runs); i++ {
		if runs[i].Exit == 76 && !runs[i].Revoked {
			r.LossGaps = append(r.LossGaps, time.Duration(runs[i+1].Life.First-runs[i].Life.Last))
		}
	}
}

// checkProgress judges liveness: after a heal that leaves no fault active,
// a path with a zklock waiting throughout the next b.Progress shows a
// command alive within it. A window that the next fault cuts short, or the
// end of the workload, is not judged.
func (r *Result) checkProgress(h History, p Path, b Bounds) {
	for _, f := range h.Faults {
		from, to := f.End, f.End+int64(b.Progress)
		if to > h.End || faultActive(h.Faults, from, to) {
			continue
		}
		r.Windows++
		var waiter *Run
		progressed := false
		for i := range h.Runs {
			run := &h.Runs[i]
			if !slices.Contains(run.Paths, p.Name) {
				continue
			}
			if run.Life != nil && run.Life.First <= to && run.Life.Last >= from {
				progressed = true
				break
			}
			if run.Invoked <= from && run.Exited >= to && !run.Killed {
				waiter = run
			}
		}
		if !progressed && waiter != nil {
			r.add(Violation{Rule: RuleProgress, Path: p.Name, Runs: []string{waiter.ID}, At: from,
				Detail: fmt.Sprintf("no command ran on %s for %s after %s on %s healed, while %s waited", p.Name, b.Progress, f.Kind, f.Target, waiter.ID)})
		}
	}
}

// faultActive reports whether a fault is active at any moment in (from, to]
// or at from itself (an overlapping fault that has not healed yet).
func faultActive(faults []Fault, from, to int64) bool {
	for _, f := range faults {
		if f.Start <= to && f.End > from {
			return true
		}
	}
	return false
}

func (r *Result) add(v Violation) { r.Violations = append(r.Violations, v) }
