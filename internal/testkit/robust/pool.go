package robust

import (
	"fmt"
	"slices"
	"strings"
)

// RulePool is a pool handing out members it should not: a member it does
// not have, one twice, more or fewer than the run took, or more members
// at once than the pool has.
const RulePool = "pool"

// checkPool judges a pool (`--resources`) on the runs whose command ran,
// by what ZKLOCK_RESOURCES told each command:
//
//   - a run holds exactly Take members, each a member of the pool, none
//     twice;
//   - each member is an exclusive lock: its holders' lifetimes never
//     overlap and their fencing tokens, which zklock gives per member
//     path, increase in start order;
//   - the members alive at once never outnumber the pool's.
//
// The last follows from the first two while zklock names members right;
// it is judged on its own so that a history where it does not (a member
// the checker was not told of) still fails by the promise a user reads.
func (r *Result) checkPool(p Path, runs []Run) {
	byMember := map[string][]Run{}
	for _, run := range runs {
		if run.Conflict {
			continue // the kernel detector's violation already
		}
		if bad := badResources(p, run); bad != "" {
			r.add(Violation{Rule: RulePool, Path: p.Name, Runs: []string{run.ID}, At: run.Life.First,
				Detail: fmt.Sprintf("%s was given %q by %s: %s", run.ID, strings.Join(run.Resources, ","), p.Name, bad)})
		}
		for _, m := range distinct(run.Resources) {
			byMember[m] = append(byMember[m], run)
		}
	}
	for _, m := range p.Members {
		name := strings.TrimSuffix(p.Name, "/") + "/" + m
		member := Path{Name: name, Kind: Exclusive}
		r.checkOverlap(member, byMember[m]) // runs are in start order already
		r.checkFencing(member, byMember[m])
		r.lossGaps(byMember[m])
	}
	r.checkPoolTotal(p, runs)
}

// badResources says what is wrong with the members a run was given, ""
// when nothing is.
func badResources(p Path, run Run) string {
	seen := map[string]bool{}
	for _, m := range run.Resources {
		switch {
		case !slices.Contains(p.Members, m):
			return fmt.Sprintf("%q is no member of the pool", m)
		case seen[m]:
			return fmt.Sprintf("%q twice", m)
		}
		seen[m] = true
	}
	if len(run.Resources) != run.Take {
		return fmt.Sprintf("%d members, but it took %d", len(run.Resources), run.Take)
	}
	return ""
}

// checkPoolTotal judges, at each command's start, the members held by
// every command then alive against the pool's size.
func (r *Result) checkPoolTotal(p Path, runs []Run) {
	runs = slices.DeleteFunc(slices.Clone(runs), func(run Run) bool { return run.Conflict })
	for i, cur := range runs {
		held, ids := len(distinct(cur.Resources)), []string{cur.ID}
		for j, other := range runs {
			if j != i && other.Life.First <= cur.Life.First && cur.Life.First <= other.Life.Last &&
				(other.Life.First != cur.Life.First || j < i) {
				held += len(distinct(other.Resources))
				ids = append(ids, other.ID)
			}
		}
		if held > len(p.Members) {
			r.add(Violation{Rule: RulePool, Path: p.Name, Runs: ids, At: cur.Life.First,
				Detail: fmt.Sprintf("%d members of %s held at once, the pool has %d", held, p.Name, len(p.Members))})
		}
	}
}

// distinct is members without repeats: a member named twice is one
// member held (badResources reports the naming).
func distinct(members []string) []string {
	out := slices.Clone(members)
	slices.Sort(out)
	return slices.Compact(out)
}
