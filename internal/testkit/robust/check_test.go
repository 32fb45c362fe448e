package robust

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const s = int64(time.Second)

// ran is a run on path whose command lived from first to last (seconds),
// with a fencing token and an exit code.
func ran(id, path string, role Role, first, last float64, token int64, exit int) Run {
	f, l := int64(first*float64(s)), int64(last*float64(s))
	return Run{ID: id, Paths: []string{path}, Role: role, Invoked: f - s/10, Exited: l + s/10,
		Life: &Life{First: f, Last: l}, Tokens: map[string]int64{path: token}, Exit: exit, Session: "0x" + id}
}

func rules(r Result) []string {
	var out []string
	for _, v := range r.Violations {
		out = append(out, v.Rule)
	}
	return out
}

func TestCheckSafety(t *testing.T) {
	ex := []Path{{Name: "/a", Kind: Exclusive}}
	rw := []Path{{Name: "/rw", Kind: ReadWrite}}
	sem := []Path{{Name: "/s", Kind: Semaphore, Limit: 2}}
	once := []Path{{Name: "/o", Kind: OncePer, Window: 10 * time.Second}}
	conflict := ran("c", "/a", Holder, 5, 6, 3, 99)
	conflict.Conflict = true
	failed := ran("2", "/o", Holder, 5, 6, 2, 3)
	failed.CommandExit = 3
	unrecorded := ran("1", "/o", Holder, 1, 1.5, 1, 0)
	unrecorded.Unrecorded = true
	unrecordedLater := ran("2", "/o", Holder, 4, 5, 2, 0)
	unrecordedLater.Unrecorded = true
	for _, tc := range []struct {
		name  string
		paths []Path
		runs  []Run
		want  []string
	}{
		{"one holder after another", ex, []Run{ran("1", "/a", Holder, 1, 2, 1, 0), ran("2", "/a", Holder, 2.1, 3, 2, 0)}, nil},
		{"a holder starts before its predecessor's last beat", ex,
			[]Run{ran("1", "/a", Holder, 1, 2, 1, 76), ran("2", "/a", Holder, 1.9, 3, 2, 0)}, []string{RuleExclusive}},
		{"a holder inside another", ex,
			[]Run{ran("1", "/a", Holder, 1, 5, 1, 0), ran("2", "/a", Holder, 2, 3, 2, 0)}, []string{RuleExclusive}},
		{"two holders start at once", ex,
			[]Run{ran("1", "/a", Holder, 1, 2, 1, 0), ran("2", "/a", Holder, 1, 2, 2, 0)}, []string{RuleExclusive}},
		{"the kernel detector alone", ex, []Run{conflict}, []string{RuleKernel}},
		{"readers together", rw,
			[]Run{ran("r1", "/rw", Reader, 1, 3, 2, 0), ran("r2", "/rw", Reader, 2, 4, 1, 0)}, nil},
		{"a writer beside a reader", rw,
			[]Run{ran("r", "/rw", Reader, 1, 3, 1, 0), ran("w", "/rw", Writer, 2, 4, 2, 0)}, []string{RuleReadWrite}},
		{"two writers", rw,
			[]Run{ran("w1", "/rw", Writer, 1, 3, 1, 0), ran("w2", "/rw", Writer, 2, 4, 2, 0)}, []string{RuleExclusive}},
		{"a writer's token below a reader's before it", rw,
			[]Run{ran("r", "/rw", Reader, 1, 2, 5, 0), ran("w", "/rw", Writer, 3, 4, 4, 0)}, []string{RuleFencing}},
		{"two leases of two", sem,
			[]Run{ran("1", "/s", Holder, 1, 3, 1, 0), ran("2", "/s", Holder, 2, 4, 2, 0), ran("3", "/s", Holder, 3.5, 5, 3, 0)}, nil},
		{"three leases of two", sem,
			[]Run{ran("1", "/s", Holder, 1, 3, 1, 0), ran("2", "/s", Holder, 2, 4, 2, 0), ran("3", "/s", Holder, 2.5, 5, 3, 0)}, []string{RuleLimit}},
		{"tokens increase", ex,
			[]Run{ran("1", "/a", Holder, 1, 2, 10, 0), ran("2", "/a", Holder, 3, 4, 11, 0)}, nil},
		{"a later holder with a smaller token", ex,
			[]Run{ran("1", "/a", Holder, 1, 2, 10, 0), ran("2", "/a", Holder, 3, 4, 9, 0)}, []string{RuleFencing}},
		{"the same token twice", ex,
			[]Run{ran("1", "/a", Holder, 1, 2, 10, 0), ran("2", "/a", Holder, 3, 4, 10, 0)}, []string{RuleFencing}},
		{"once per window", once,
			[]Run{ran("1", "/o", Holder, 1, 2, 1, 0), failed, ran("3", "/o", Holder, 11, 12, 3, 0)}, nil},
		{"a success not recorded starts no window", once,
			[]Run{unrecorded, ran("2", "/o", Holder, 2, 2.5, 2, 0), ran("3", "/o", Holder, 12, 13, 3, 0)}, nil},
		{"a success within the window of the last one recorded", once,
			[]Run{ran("1", "/o", Holder, 1, 2, 1, 0), unrecordedLater, ran("3", "/o", Holder, 6, 7, 3, 0)}, []string{RuleOncePer, RuleOncePer}},
		{"two successes in one window", once,
			[]Run{ran("1", "/o", Holder, 1, 2, 1, 0), ran("2", "/o", Holder, 9, 9.5, 2, 0)}, []string{RuleOncePer}},
		{"an exit nothing explains", ex, []Run{ran("1", "/a", Holder, 1, 2, 1, 70)}, []string{RuleExit}},
		{"exit 0 without the command", ex, []Run{{ID: "1", Paths: []string{"/a"}, Exit: 0}}, []string{RuleExit}},
		{"a run the nemesis killed", ex, []Run{{ID: "1", Paths: []string{"/a"}, Exit: -1, Signal: "killed", Killed: true}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(History{Paths: tc.paths, Runs: tc.runs}, Bounds{Progress: 10 * time.Second})
			if got := rules(r); !slices.Equal(got, tc.want) {
				t.Errorf("violations %v, want %v: %+v", got, tc.want, r.Violations)
			}
		})
	}
}

func TestCheckLosses(t *testing.T) {
	revoked := ran("revoked", "/a", Holder, 7, 8, 6, 76)
	revoked.Revoked = true
	h := History{
		Paths: []Path{{Name: "/a", Kind: Exclusive}},
		Runs: []Run{
			ran("needed", "/a", Holder, 1, 2, 1, 76),
			ran("next", "/a", Holder, 2.5, 3, 2, 0),
			ran("needless", "/a", Holder, 4, 5, 3, 76),
			ran("after", "/a", Holder, 5.2, 6, 5, 0),
			revoked,
			{ID: "waiter", Paths: []string{"/a"}, Exit: 76, Revoked: true},
		},
		Expired: []string{"0xneeded"},
	}
	r := Check(h, Bounds{Progress: time.Minute})
	if len(r.Violations) != 0 {
		t.Fatalf("violations: %+v", r.Violations)
	}
	if r.Losses != 3 || r.Needed != 1 || r.Revoked != 1 || !slices.Equal(r.Needless, []string{"needless"}) {
		t.Errorf("losses %d, needed %d, revoked %d, needless %v; want 3, 1, 1, [needless]", r.Losses, r.Needed, r.Revoked, r.Needless)
	}
	want := []time.Duration{200 * time.Millisecond, 500 * time.Millisecond}
	if !slices.Equal(r.LossGaps, want) {
		t.Errorf("gaps %v, want %v", r.LossGaps, want)
	}
	if r.Runs != 6 || r.Ran != 5 || r.Exits[76] != 4 {
		t.Errorf("runs %d, ran %d, exits %v", r.Runs, r.Ran, r.Exits)
	}
}

func TestCheckProgress(t *testing.T) {
	paths := []Path{{Name: "/a", Kind: Exclusive}}
	// waiter waits from 0 s to 30 s; a fault from 1 s heals at 2 s. The
	// last fault's own window is judged too.
	waiter := Run{ID: "waiter", Paths: []string{"/a"}, Invoked: 0, Exited: 30 * s, Exit: 75}
	fault := Fault{Kind: "kill", Target: "server 1", Start: 1 * s, End: 2 * s}
	b := Bounds{Progress: 5 * time.Second}
	for _, tc := range []struct {
		name    string
		runs    []Run
		faults  []Fault
		want    []string
		windows int
	}{
		{"stalled after the heal", []Run{waiter}, []Fault{fault}, []string{RuleProgress}, 1},
		{"a holder runs within the bound", []Run{waiter, ran("h", "/a", Holder, 6, 6.5, 1, 0)}, []Fault{fault}, nil, 1},
		{"a holder only after the bound", []Run{waiter, ran("h", "/a", Holder, 7.5, 8, 1, 0)}, []Fault{fault}, []string{RuleProgress}, 1},
		{"a holder across the whole window", []Run{waiter, ran("h", "/a", Holder, 1, 9, 1, 0)}, []Fault{fault}, nil, 1},
		{"the next fault cuts the window short", []Run{waiter},
			[]Fault{fault, {Kind: "partition", Target: "client 1", Start: 4 * s, End: 29 * s}}, nil, 1},
		{"nobody waits", nil, []Fault{fault}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(History{Paths: paths, Runs: tc.runs, Faults: tc.faults, End: 60 * s}, b)
			if got := rules(r); !slices.Equal(got, tc.want) {
				t.Errorf("violations %v, want %v: %+v", got, tc.want, r.Violations)
			}
			if r.Windows != tc.windows {
				t.Errorf("%d windows judged, want %d", r.Windows, tc.windows)
			}
		})
	}
}

func TestReadHistory(t *testing.T) {
	in := `{"header":{"seed":42,"session":2000000000,"begin":1,"end":9}}
{"path":{"name":"/a","kind":"exclusive"}}
{"run":{"id":"1","paths":["/a"],"role":"holder","exit":0,"life":{"first":2,"last":3}}}
{"fault":{"kind":"kill","target":"server 2","start":4,"end":5}}
{"expired":"0x1"}
`
	h, err := ReadHistory(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if h.Seed != 42 || h.Session != 2*time.Second || len(h.Paths) != 1 || len(h.Runs) != 1 || len(h.Faults) != 1 ||
		!slices.Equal(h.Expired, []string{"0x1"}) || h.Runs[0].Life.Last != 3 {
		t.Errorf("read %+v", h)
	}
	if _, err := ReadHistory(strings.NewReader("{\n")); err == nil {
		t.Error("a broken line was read")
	}
}
