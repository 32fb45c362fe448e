package robust

import (
	"slices"
	"testing"
	"time"
)

// waited is a run of path that never ran its command: started at invoked
// and reaped at exited (seconds), with pid and an order key.
func waited(id, path string, pid int, key int64, invoked, exited float64, exit int) Run {
	return Run{ID: id, Paths: []string{path}, Role: Holder, Host: "h", PID: pid, OrderKey: &key,
		Invoked: int64(invoked * float64(s)), Exited: int64(exited * float64(s)), Exit: exit}
}

func key(k int64) *int64 { return &k }

func TestCheckSupersede(t *testing.T) {
	q := []Path{{Name: "/q", Kind: Exclusive, Supersede: true}}
	holder := ran("h", "/q", Holder, 1, 5, 1, 0)
	holder.Host, holder.PID, holder.OrderKey = "h", 10, key(1)
	// next ran after the holder; old waited before it and left for it.
	next := ran("n", "/q", Holder, 5.1, 6, 2, 0)
	next.Host, next.PID, next.OrderKey, next.Invoked = "h", 12, key(5), 3*s
	old := waited("o", "/q", 11, 4, 2, 3.2, 75)
	old.SupersededBy, old.Outcome = &Superseder{Host: "h", PID: 12, Key: key(5)}, "superseded"
	// late arrived after next with a lower key, and left at once, naming
	// the waiter whose key is higher.
	late := waited("l", "/q", 13, 3, 4, 4.1, 75)
	late.SupersededBy = &Superseder{Host: "h", PID: 12, Key: key(5)}
	// retry has the key of the run that took its place.
	retry := old
	retry.OrderKey = key(5)

	ranAnyway := old
	ranAnyway.Exit, ranAnyway.Life = 0, &Life{First: 7 * s, Last: 8 * s}
	exit1 := old
	exit1.Exit = 1
	stranger := old
	stranger.SupersededBy = &Superseder{Host: "h", PID: 99}
	notYet := old
	notYet.Exited = 5 * s / 2 // left before its superseder started
	lower := old
	lower.OrderKey = key(6) // left for a key below its own
	misnamed := old
	misnamed.SupersededBy = &Superseder{Host: "h", PID: 12, Key: key(7)}
	otherOutcome := old
	otherOutcome.Outcome = "timeout"
	unnamed := old
	unnamed.SupersededBy = nil
	killed := ranAnyway
	killed.Killed = true
	for _, tc := range []struct {
		name string
		runs []Run
		want []string
	}{
		{"waiters leave for a higher key, the holder and the next run", []Run{holder, old, late, next}, nil},
		{"an equal key takes the place", []Run{holder, retry, next}, nil},
		{"a superseded waiter's command runs", []Run{holder, ranAnyway, next}, []string{RuleSupersede}},
		{"a superseded waiter exits 1", []Run{holder, exit1, next}, []string{RuleExit, RuleSupersede}},
		{"it names no contender of the path", []Run{holder, stranger, next}, []string{RuleSupersede}},
		{"it names one started only after it left", []Run{holder, notYet, next}, []string{RuleSupersede}},
		{"it left for a lower key", []Run{holder, lower, next}, []string{RuleSupersede}},
		{"it names a key its superseder did not have", []Run{holder, misnamed, next}, []string{RuleSupersede}},
		{"its exit event says another outcome", []Run{holder, otherOutcome, next}, []string{RuleSupersede}},
		{"its outcome is superseded but it names no one", []Run{holder, unnamed, next}, []string{RuleSupersede}},
		{"the nemesis killed it", []Run{holder, killed, next}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(History{Paths: q, Runs: tc.runs}, Bounds{Progress: time.Minute})
			if got := rules(r); !slices.Equal(got, tc.want) {
				t.Errorf("violations %v, want %v: %+v", got, tc.want, r.Violations)
			}
		})
	}
}

func TestParseSuperseded(t *testing.T) {
	for _, tc := range []struct {
		stderr string
		want   *Superseder
	}{
		{`{"msg":"/q: superseded by a contender with order key -3 on web-1 pid 4242 (node _c_x-lock-0000000007)"}`,
			&Superseder{Host: "web-1", PID: 4242, Key: key(-3)}},
		{`zklock: /q: superseded by a newer contender on web-1 pid 17 (node n)`, &Superseder{Host: "web-1", PID: 17}},
		{`zklock: /q: lock busy`, nil},
	} {
		got := ParseSuperseded(tc.stderr)
		if (got == nil) != (tc.want == nil) || got != nil &&
			(got.Host != tc.want.Host || got.PID != tc.want.PID || (got.Key == nil) != (tc.want.Key == nil) || got.Key != nil && *got.Key != *tc.want.Key) {
			t.Errorf("ParseSuperseded(%q) = %+v, want %+v", tc.stderr, got, tc.want)
		}
	}
}
