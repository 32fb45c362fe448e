package robust

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// pooled is a run of the pool /p whose command lived from first to last
// (seconds), given members as "member:token" (ZKLOCK_RESOURCES and the
// member paths' fencing tokens), having taken as many.
func pooled(id string, first, last float64, members ...string) Run {
	f, l := int64(first*float64(s)), int64(last*float64(s))
	run := Run{ID: id, Paths: []string{"/p"}, Role: Holder, Invoked: f - s/10, Exited: l + s/10,
		Life: &Life{First: f, Last: l}, Tokens: map[string]int64{}, Session: "0x" + id, Take: len(members)}
	for _, m := range members {
		name, tok, _ := strings.Cut(m, ":")
		run.Resources = append(run.Resources, name)
		var n int64
		for _, c := range tok {
			n = n*10 + int64(c-'0')
		}
		run.Tokens["/p/"+name] = n
	}
	return run
}

func TestCheckPool(t *testing.T) {
	pool := []Path{{Name: "/p", Kind: Pool, Members: []string{"a", "b", "c"}}}
	// A healthy history: two runs of one member each and one of two, all
	// at once, then their successors on the members they freed.
	healthy := []Run{
		pooled("1", 1, 3, "a:1"), pooled("2", 1.5, 4, "b:2", "c:3"),
		pooled("3", 3.1, 5, "a:4"), pooled("4", 4.2, 6, "b:5", "c:6"),
	}
	both := pooled("x", 2, 2.5, "a:7")
	stranger := pooled("x", 6.5, 7, "c:7")
	stranger.Resources = append(stranger.Resources, "d") // not a member of /p
	stranger.Take = 2
	twice := pooled("x", 5.5, 7, "a:7")
	twice.Resources, twice.Take = []string{"a", "a"}, 2
	short := pooled("x", 6.5, 7, "a:7")
	short.Take = 2
	none := pooled("x", 6.5, 7)
	none.Take = 1
	stale := pooled("x", 6.5, 7, "a:3") // after token 4 of member a
	conflict := pooled("x", 2, 2.5, "a:7")
	conflict.Conflict, conflict.Exit = true, 99
	// A fourth member held beside the three: seen on its name and on
	// the total.
	fourth := pooled("x", 2, 2.5)
	fourth.Resources = []string{"e"}
	for _, tc := range []struct {
		name string
		runs []Run
		want []string
	}{
		{"members held at once, freed and taken again", healthy, nil},
		// A member given twice at once breaks exclusion, its fencing (the
		// successor's token is below the intruder's) and the pool's size.
		{"a member given beside its holder", append(slices.Clone(healthy), both), []string{RuleExclusive, RuleFencing, RulePool}},
		{"a member the pool does not have", append(slices.Clone(healthy), stranger), []string{RulePool}},
		{"one member named twice", append(slices.Clone(healthy), twice), []string{RulePool}},
		{"fewer members than the run took", append(slices.Clone(healthy), short), []string{RulePool}},
		{"a run given no member", append(slices.Clone(healthy), none), []string{RulePool}},
		{"a member's token not above its last holder's", append(slices.Clone(healthy), stale), []string{RuleFencing}},
		{"the kernel detector alone", append(slices.Clone(healthy), conflict), []string{RuleKernel}},
		{"more members held than the pool has", append(slices.Clone(healthy), fourth), []string{RulePool, RulePool}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(History{Paths: pool, Runs: tc.runs}, Bounds{Progress: time.Minute})
			got := rules(r)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations %v, want %v: %+v", got, tc.want, r.Violations)
			}
		})
	}
}
