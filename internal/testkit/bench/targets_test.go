package bench

import (
	"strings"
	"testing"
)

// TestTargets checks each goal's verdict on either side of its bound, and
// that a side not measured leaves the goal unjudged.
func TestTargets(t *testing.T) {
	dist := func(p50 float64) Dist { return Dist{N: 10, P50: p50, P99: p50} }
	lat := func(tool string, p50 float64) LatencyResult {
		return LatencyResult{Tool: tool, Dist: dist(p50), CPU: dist(p50 / 2)}
	}
	thr := func(tool string, loops int, per float64) ThroughputResult {
		return ThroughputResult{Tool: tool, Loops: loops, Acquisitions: 100, PerSecond: per}
	}
	base := func() *Results {
		return &Results{
			Tools:        []ToolInfo{{Key: "zklock", Name: "zklock"}, {Key: "minimal", Name: "minimal Go runner"}, {Key: "etcd", Name: "etcdctl lock"}},
			Uncontended:  []LatencyResult{lat("zklock", 6), lat("minimal", 5), lat("etcd", 12)},
			Contended:    []ThroughputResult{thr("zklock", 10, 90), thr("minimal", 10, 100), thr("zklock", 50, 80), thr("minimal", 50, 100)},
			HandoffPair:  []HandoffResult{{Tool: "zklock", Waiters: 1, Dist: dist(2.5)}},
			Handoff:      []HandoffResult{{Tool: "zklock", Waiters: 50, Dist: dist(2.6)}},
			HandoffFloor: &Dist{N: 10, P50: 0.5},
			ServerPart:   &ServerPart{CloseToWatch: dist(1)},
			Idle: &IdleResult{Waiters: 1000, WindowMS: 20000, SessionTimeoutMS: 10000, PingsPerSec: 0.3, PacketsPerSec: 0.32,
				Sampled: 20, PrivateMedianKiB: 1400, PrivateMaxKiB: 1536, ProcessesMax: 1},
			Storm: &StormResult{Contenders: 1000, DoneMS: 5000, Runs: 1, Skipped: 999},
			List:  []ListResult{{Znodes: 20000, ZklockMS: 1200}, {Znodes: 100000, ZklockMS: 5001}},
		}
	}
	verdicts := func(r *Results) map[string]string {
		out := map[string]string{}
		for _, t := range r.targets() {
			out[t.What] = metWord(t)
		}
		return out
	}
	want := func(t *testing.T, r *Results, what, verdict string) {
		t.Helper()
		for k, v := range verdicts(r) {
			if strings.Contains(k, what) {
				// A target not met says why after the verdict.
				if v != verdict && !strings.HasPrefix(v, verdict+": ") {
					t.Errorf("%q: %s, want %s", k, v, verdict)
				}
				return
			}
		}
		t.Errorf("no target %q", what)
	}

	r := base()
	want(t, r, "vs minimal Go runner", "**met**") // 1.2×
	want(t, r, "vs etcdctl lock", "**met**")      // 0.5×
	want(t, r, "10 loops", "**met**")             // 0.9×
	want(t, r, "50 loops", "**not met**")         // 0.8×
	want(t, r, "one waiter", "**met**")           // 2.5 ≤ 1 + 0.5 + 1
	want(t, r, "a queue of waiters", "**not met**")
	if v := verdicts(r)["handoff p50 (loopback), a queue of waiters"]; !strings.Contains(v, "learns that it is next") {
		t.Errorf("the queue handoff says no reason: %s", v)
	}
	want(t, r, "private memory", "**met**")
	want(t, r, "idle waiter", "**met**") // within the tolerance
	want(t, r, "storm", "**met**")
	want(t, r, "20000-znode", "**met**")
	want(t, r, "100000-znode", "**not met**")

	r = base()
	r.Uncontended[0].Dist = dist(6.1)
	r.Idle.PrivateMaxKiB = 1537
	r.Idle.PacketsPerSec = 2.3 // the keepalive's syncs
	r.Storm.Runs = 2
	want(t, r, "vs minimal Go runner", "**not met**")
	want(t, r, "private memory", "**not met**")
	want(t, r, "idle waiter", "**not met**")
	want(t, r, "storm", "**not met**")

	r = base()
	r.Storm.Left = 1
	want(t, r, "storm", "**not met**")
	r.Storm, r.Idle, r.ServerPart, r.Uncontended = nil, nil, nil, r.Uncontended[:1]
	for _, what := range []string{"vs minimal Go runner", "storm", "private memory", "idle waiter", "one waiter"} {
		want(t, r, what, "not measured")
	}
}
