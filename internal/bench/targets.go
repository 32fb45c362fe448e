package bench

import (
	"fmt"
	"strings"
	"time"
)

// Target is one goal the report checks the numbers against.
type Target struct {
	What     string
	Want     string
	Got      string
	Met      bool
	Measured bool // false: a side of the comparison was not measured
}

// targets checks the goals zklock is held to.
func (r *Results) targets() []Target {
	var out []Target
	out = append(out, r.latencyTargets()...)
	out = append(out, r.throughputTargets()...)
	out = append(out, r.handoffTargets()...)
	return append(out, r.memoryTarget(), r.keepaliveTarget(), r.herdTarget(), r.listTarget())
}

// latencyTargets compare the uncontended median with etcdctl's and Kazoo's.
func (r *Results) latencyTargets() []Target {
	var out []Target
	zl := r.latency("zklock")
	for _, p := range []struct {
		key   string
		ratio float64
	}{{"etcd", 0.6}, {"kazoo", 0.2}} {
		t := Target{What: fmt.Sprintf("uncontended `run -- true`, median, vs %s", r.toolName(p.key)),
			Want: fmt.Sprintf("≤ %.1f× %s", p.ratio, r.toolName(p.key))}
		if pl := r.latency(p.key); zl != nil && pl != nil {
			ratio := zl.Dist.P50 / pl.Dist.P50
			t.Measured = true
			t.Met = ratio <= p.ratio
			t.Got = fmt.Sprintf("%.2f× (%.2f ms vs %.2f ms)", ratio, zl.Dist.P50, pl.Dist.P50)
		} else {
			t.Got = "not measured"
		}
		out = append(out, t)
	}
	return out
}

// throughputTargets compare contended throughput with etcdctl's.
func (r *Results) throughputTargets() []Target {
	var out []Target
	for _, loops := range []int{10, 50} {
		t := Target{What: fmt.Sprintf("contended throughput, %d loops", loops), Want: "≥ etcdctl lock"}
		z, e := r.throughput("zklock", loops), r.throughput("etcd", loops)
		if z != nil && e != nil {
			t.Measured = true
			t.Met = z.PerSecond >= e.PerSecond
			t.Got = fmt.Sprintf("%.2f× (%.1f/s vs %.1f/s)", z.PerSecond/e.PerSecond, z.PerSecond, e.PerSecond)
		} else {
			t.Got = "not measured"
		}
		out = append(out, t)
	}
	return out
}

// handoffTargets bound the handoff's median, with one waiter and a queue.
func (r *Results) handoffTargets() []Target {
	var out []Target
	for _, hs := range []struct {
		what string
		list []HandoffResult
	}{{"one waiter", r.HandoffPair}, {"a queue of waiters", r.Handoff}} {
		t := Target{What: "handoff latency p50 (loopback), " + hs.what, Want: "≤ 2 ms"}
		if h := findHandoff(hs.list, "zklock"); h != nil {
			t.Measured = true
			t.Met = h.Dist.P50 <= 2
			t.Got = fmt.Sprintf("%.2f ms (p99 %.2f ms)", h.Dist.P50, h.Dist.P99)
			if f := r.HandoffFloor; f != nil {
				t.Got += fmt.Sprintf("; the probe alone: %.2f ms", f.P50)
			}
		} else {
			t.Got = "not measured"
		}
		out = append(out, t)
	}
	return out
}

// memoryTarget bounds a waiting zklock's resident memory.
func (r *Results) memoryTarget() Target {
	t := Target{What: "resident memory of a waiting zklock", Want: "≤ 12 MiB"}
	if m := r.memory("zklock"); m != nil {
		t.Measured = true
		t.Met = float64(m.RSSKiB) <= 12*1024
		t.Got = fmt.Sprintf("%.1f MiB VmRSS over %d processes", float64(m.RSSKiB)/1024, m.Processes)
		if m.PssKiB > 0 {
			t.Got += fmt.Sprintf(" (Pss %.1f MiB: the watchdog shares zklock's executable)", float64(m.PssKiB)/1024)
		}
	} else {
		t.Got = "not measured"
	}
	return t
}

// keepaliveTarget bounds what an idle holder sends.
func (r *Results) keepaliveTarget() Target {
	t := Target{What: "packets one idle holder sends per session timeout T", Want: "≤ 25 (20 keepalive syncs, 3 pings)"}
	if k := r.Keepalive; k != nil && k.Error == "" {
		t.Measured = true
		t.Met = k.PacketsPerT <= 25
		t.Got = fmt.Sprintf("%.1f (T = %s, over %d T)", k.PacketsPerT, time.Duration(k.SessionTimeoutMS)*time.Millisecond, k.Periods)
	} else {
		t.Got = "not measured"
	}
	return t
}

// herdTarget checks herd-freedom: each release is one deletion event, seen
// by at most two sessions whatever the queue's length (the waiter right
// behind, and the releasing holder itself, which watches its own node for
// a revocation or an outside delete), and no child or creation watch
// fires. Data-change notifications are counted apart: a holder that waited
// records when it took the lock in its own node, which notifies its own
// session and the waiter behind it, who watches again without listing.
func (r *Results) herdTarget() Target {
	t := Target{What: "watch notifications per release, any queue length (herd-free)",
		Want: "≤ 1 deletion event, seen by ≤ 2 sessions (the next waiter, the holder's own watch)"}
	var got []string
	ok, any := true, false
	for _, q := range r.Queue {
		if q.Error != "" || q.Deltas == nil {
			ok = false
			got = append(got, fmt.Sprintf("%d: failed", q.Waiters))
			continue
		}
		any = true
		sum, cnt := q.Deltas["zk_sum_node_deleted_watch_count"], q.Deltas["zk_cnt_node_deleted_watch_count"]
		others := q.Deltas["zk_sum_node_children_watch_count"] + q.Deltas["zk_sum_node_created_watch_count"]
		changed := q.Deltas["zk_sum_node_changed_watch_count"]
		// A release is at most one deletion event (none when nobody
		// watched the node), seen by at most two sessions.
		if cnt > int64(q.Releases) || sum > 2*int64(q.Releases) || others != 0 {
			ok = false
		}
		rel := float64(q.Releases)
		got = append(got, fmt.Sprintf("%d waiters: %s deletion events, seen by %s sessions (and %s data-change notifications)", q.Waiters,
			trimFloat(float64(cnt)/rel), trimFloat(float64(sum+others)/rel), trimFloat(float64(changed)/rel)))
	}
	t.Measured = any
	t.Met = any && ok
	t.Got = strings.Join(got, "; ")
	if !any {
		t.Got = "not measured"
	}
	return t
}

// listTargetZnodes is the tree size the list target names; the largest tree
// measured is scaled to it, since the walk's time grows with the tree.
const listTargetZnodes = 20000

// listTarget: `zklock list` of a 20,000-znode tree within 1.5 s on
// loopback, read off the largest tree measured at its rate per znode.
func (r *Results) listTarget() Target {
	t := Target{What: fmt.Sprintf("`list` of a %d-znode tree (loopback), whole process", listTargetZnodes), Want: "≤ 1.5 s"}
	var best *ListResult
	for i, l := range r.List {
		if l.Error == "" && l.ZklockMS > 0 && (best == nil || l.Znodes > best.Znodes) {
			best = &r.List[i]
		}
	}
	if best == nil {
		t.Got = "not measured"
		return t
	}
	sec := best.ZklockMS / float64(best.Znodes) * listTargetZnodes / 1000
	t.Measured, t.Met = true, sec <= 1.5
	t.Got = fmt.Sprintf("%.2f s (%d znodes in %.0f ms)", sec, best.Znodes, best.ZklockMS)
	return t
}

func metWord(t Target) string {
	switch {
	case !t.Measured:
		return "not measured"
	case t.Met:
		return "**met**"
	default:
		return "**not met**"
	}
}
