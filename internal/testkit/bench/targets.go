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
	// Why says, for a target not met, what the run measured as the cause.
	Why string
}

// The goals zklock is held to. Each is a ratio to a peer measured in the
// same run, or a bound whose parts (ZooKeeper's own time, the probe's) are
// measured in the same run, so that a loaded machine moves both sides.
const (
	// uncontendedVsMinimal bounds an uncontended run against the minimal
	// Go runner: connect, create, list, run, close.
	uncontendedVsMinimal = 1.2
	// uncontendedVsEtcd bounds it against etcdctl lock.
	uncontendedVsEtcd = 0.5
	// contendedVsMinimal is the least share of the minimal runner's
	// throughput with 10 and 50 loops on one lock.
	contendedVsMinimal = 0.9
	// handoffSlackMS is what zklock may add to a handoff over ZooKeeper's
	// close-to-watch time and the probe's own floor.
	handoffSlackMS = 1.0
	// waiterPrivateKiB bounds the private memory of a waiter deep in a
	// queue, all its processes together.
	waiterPrivateKiB = 1536
	// pingTolerance is how far a waiter's idle traffic may exceed its
	// pings' rate: the window does not cover a whole number of ping
	// periods of every waiter.
	pingTolerance = 1.1
	// stormDoneSeconds bounds a storm, from its last start to its last exit.
	stormDoneSeconds = 5
	// stormWindow is the storm's --once-per window: far longer than the
	// storm.
	stormWindow = "1h"
	// The list targets: whole processes on trees of these sizes.
	listTargetSmall        = 20000
	listTargetSmallSeconds = 1.2
	listTargetLarge        = 100000
	listTargetLargeSeconds = 5
)

// extraTargets are rows other files add (see variants.go).
var extraTargets []func(*Results) []Target

// targets checks the goals zklock is held to.
func (r *Results) targets() []Target {
	var out []Target
	out = append(out, r.latencyTargets()...)
	out = append(out, r.throughputTargets()...)
	out = append(out, r.handoffTargets()...)
	out = append(out, r.waiterMemoryTarget(), r.idleTrafficTarget(), r.stormTarget())
	out = append(out, r.listTargets()...)
	out = append(out, r.herdTarget(), r.keepaliveTarget())
	for _, f := range extraTargets {
		out = append(out, f(r)...)
	}
	return out
}

// notMeasured fills in a target one side of which is missing.
func notMeasured(t Target) Target {
	t.Got = "not measured"
	return t
}

// latencyTargets compare the uncontended median with the minimal runner's
// and etcdctl's, with CPU time beside.
func (r *Results) latencyTargets() []Target {
	var out []Target
	zl := r.latency("zklock")
	for _, p := range []struct {
		key   string
		ratio float64
	}{{"minimal", uncontendedVsMinimal}, {"etcd", uncontendedVsEtcd}} {
		t := Target{What: fmt.Sprintf("uncontended `run -- true`, median, vs %s", r.toolName(p.key)),
			Want: fmt.Sprintf("≤ %s× %s", trimFloat(p.ratio), r.toolName(p.key))}
		t = latencyAtMost(t, zl, r.latency(p.key), p.ratio)
		if t.Measured && !t.Met {
			t.Why = r.startCosts()
		}
		out = append(out, t)
	}
	return out
}

// startCosts is the measured cause of zklock's uncontended and contended
// cost beyond the minimal runner's: zklock's own start, measured on its
// own in the same run, and what is left, the run's own work (see
// cpuShares); empty when not measured.
func (r *Results) startCosts() string {
	zl, mn, p := r.latency("zklock"), r.latency("minimal"), r.Profile
	if zl == nil || mn == nil || p == nil || zl.CPU.N == 0 || mn.CPU.N == 0 {
		return ""
	}
	cost := func(what string) *Cost { return find(p.Costs, func(c *Cost) bool { return c.What == what }) }
	zv, ms0 := cost("`zklock version`"), cost("minimal runner, no arguments")
	if zv == nil || ms0 == nil {
		return ""
	}
	start := zv.CPUMS - ms0.CPUMS
	return fmt.Sprintf("zklock's own start costs %s ms of CPU more than the minimal runner's (the package initialisation of everything linked, the Kerberos stack's included), and its safety work (the keepalive, the own-node watch, the loss guard, the watchdog's start) about %s ms more",
		ms(start), ms(max(0, zl.CPU.P50-mn.CPU.P50-start)))
}

// latencyAtMost judges t: a's uncontended median at most ratio times b's,
// with their CPU times beside.
func latencyAtMost(t Target, a, b *LatencyResult, ratio float64) Target {
	if a == nil || b == nil {
		return notMeasured(t)
	}
	got := a.Dist.P50 / b.Dist.P50
	t.Measured, t.Met = true, got <= ratio
	t.Got = fmt.Sprintf("%.2f× (%s ms vs %s ms", got, ms(a.Dist.P50), ms(b.Dist.P50))
	if a.CPU.N > 0 && b.CPU.N > 0 {
		t.Got += fmt.Sprintf("; CPU %s ms vs %s ms, %.2f×", ms(a.CPU.P50), ms(b.CPU.P50), a.CPU.P50/b.CPU.P50)
	}
	t.Got += ")"
	return t
}

// throughputTargets compare contended throughput with the minimal runner's.
func (r *Results) throughputTargets() []Target {
	var out []Target
	for _, loops := range []int{10, 50} {
		t := Target{What: fmt.Sprintf("contended throughput, %d loops on one lock", loops),
			Want: fmt.Sprintf("≥ %s× %s", trimFloat(contendedVsMinimal), r.toolName("minimal"))}
		z, m := r.throughput("zklock", loops), r.throughput("minimal", loops)
		if z == nil || m == nil {
			out = append(out, notMeasured(t))
			continue
		}
		ratio := z.PerSecond / m.PerSecond
		t.Measured, t.Met = true, ratio >= contendedVsMinimal
		t.Got = fmt.Sprintf("%.2f× (%.1f/s vs %.1f/s", ratio, z.PerSecond, m.PerSecond)
		if z.CPUPerAcqMS > 0 && m.CPUPerAcqMS > 0 {
			t.Got += fmt.Sprintf("; CPU per acquisition %s ms vs %s ms", ms(z.CPUPerAcqMS), ms(m.CPUPerAcqMS))
		}
		t.Got += ")"
		if !t.Met {
			t.Why = r.startCosts()
		}
		out = append(out, t)
	}
	return out
}

// queueOfWaiters names the handoff through a queue.
const queueOfWaiters = "a queue of waiters"

// handoffTargets bound the handoff's median, with one waiter and a queue,
// by ZooKeeper's own part and the probe's floor, both measured in the run.
func (r *Results) handoffTargets() []Target {
	var out []Target
	for _, hs := range []struct {
		what string
		list []HandoffResult
	}{{"one waiter", r.HandoffPair}, {queueOfWaiters, r.Handoff}} {
		t := Target{What: "handoff p50 (loopback), " + hs.what,
			Want: fmt.Sprintf("≤ ZooKeeper's close-to-watch p50 + the probe's floor p50 + %s ms", trimFloat(handoffSlackMS))}
		h := findHandoff(hs.list, "zklock")
		if h == nil || r.ServerPart == nil || r.HandoffFloor == nil {
			out = append(out, notMeasured(t))
			continue
		}
		bound := r.ServerPart.CloseToWatch.P50 + r.HandoffFloor.P50 + handoffSlackMS
		t.Measured, t.Met = true, h.Dist.P50 <= bound
		t.Got = fmt.Sprintf("%s ms, bound %s ms (%s + %s + %s; p99 %s ms)", ms(h.Dist.P50), ms(bound),
			ms(r.ServerPart.CloseToWatch.P50), ms(r.HandoffFloor.P50), trimFloat(handoffSlackMS), ms(h.Dist.P99))
		if !t.Met {
			// The command starts through the watchdog's gate, once the
			// watchdog is armed: a start of a small Go program between
			// the lock taken and the command running.
			t.Why = "the command starts through the watchdog's gate, one more start of a small Go program on the handoff's path (see the watchdog section)"
			if hs.what == queueOfWaiters {
				// In a queue the waiter behind the next one learns that
				// it is next only when it takes the lock: its watchdog
				// starts then.
				t.Why = "a waiter learns that it is next in line only when the node it watches goes, so in a queue the waiter starts its watchdog on the handoff's path, and its command then starts through the watchdog's gate"
			}
			if c := r.startCosts(); c != "" {
				t.Why += "; " + c
			}
		}
		out = append(out, t)
	}
	return out
}

// waiterMemoryTarget bounds the private memory of a waiter deep in the
// idle crowd's queue, all its processes together.
func (r *Results) waiterMemoryTarget() Target {
	t := Target{What: "private memory of a waiter deep in a queue, all its processes (Private_Dirty)",
		Want: fmt.Sprintf("≤ %.1f MiB", float64(waiterPrivateKiB)/1024)}
	i := r.Idle
	if i == nil || i.Sampled == 0 {
		return notMeasured(t)
	}
	t.Measured, t.Met = true, i.PrivateMaxKiB <= waiterPrivateKiB
	t.Got = fmt.Sprintf("median %.2f MiB, largest %.2f MiB, at most %s each (%d deep waiters sampled of %d)",
		float64(i.PrivateMedianKiB)/1024, float64(i.PrivateMaxKiB)/1024, processes(i.ProcessesMax), i.Sampled, i.Waiters)
	if !t.Met {
		t.Why = "a waiter keeps what it read when it joined, the listing of every contender ahead of it, so the one that joined behind the most keeps the most (the garbage collector stays off while it waits: a collection touches more of its own metadata than it frees)"
	}
	return t
}

// idleTrafficTarget: an idle waiter sends nothing but its session's pings.
func (r *Results) idleTrafficTarget() Target {
	t := Target{What: "requests per second per idle waiter (mntr, over a crowd of waiters)",
		Want: "no more than its session's pings"}
	i := r.Idle
	if i == nil || i.Error != "" || i.WindowMS == 0 {
		return notMeasured(t)
	}
	t.Want = fmt.Sprintf("≤ %.2f/s (go-zookeeper pings every third of T = %s)", i.PingsPerSec, time.Duration(i.SessionTimeoutMS)*time.Millisecond)
	t.Measured, t.Met = true, i.PacketsPerSec <= i.PingsPerSec*pingTolerance
	t.Got = fmt.Sprintf("%.2f/s packets (%.2f reads, %.2f writes), %d waiters over %s", i.PacketsPerSec, i.ReadsPerSec, i.WritesPerSec,
		i.Waiters, fmtDuration(float64(i.WindowMS)/1000))
	return t
}

// stormTarget: a storm of --once-per contenders on one path.
func (r *Results) stormTarget() Target {
	t := Target{What: "a storm of `run --once-per` contenders on one path, started at once",
		Want: fmt.Sprintf("all done ≤ %d s after the last start, the job run once, nothing left behind", stormDoneSeconds)}
	s := r.Storm
	if s == nil || s.Contenders == 0 || (s.Error != "" && s.DoneMS == 0) {
		return notMeasured(t)
	}
	t.Measured = true
	t.Met = s.Error == "" && s.DoneMS <= stormDoneSeconds*1000 && s.Runs == 1 && s.Other == 0 && s.Left == 0
	t.Got = fmt.Sprintf("%d contenders: done %s after the last start (started over %s); ran %d time%s, %d skipped, %d other exits, %d nodes left; per contender %.1f reads, %.1f writes, %.1f packets, %s ms CPU",
		s.Contenders, fmtDuration(s.DoneMS/1000), fmtDuration(s.SpreadMS/1000), s.Runs, plural(s.Runs), s.Skipped, s.Other, s.Left,
		s.ReadsPer, s.WritesPer, s.PacketsPer, ms(s.CPUPerMS))
	if s.Error != "" {
		t.Got += "; " + s.Error
	}
	return t
}

// listTargets bound `zklock list` on the two tree sizes, whole process.
func (r *Results) listTargets() []Target {
	var out []Target
	for _, g := range []struct {
		znodes int
		sec    float64
	}{{listTargetSmall, listTargetSmallSeconds}, {listTargetLarge, listTargetLargeSeconds}} {
		t := Target{What: fmt.Sprintf("`list` of a %d-znode tree (loopback), whole process", g.znodes),
			Want: fmt.Sprintf("≤ %s s", trimFloat(g.sec))}
		l := find(r.List, func(l *ListResult) bool { return l.Znodes == g.znodes && l.Error == "" && l.ZklockMS > 0 })
		if l == nil {
			out = append(out, notMeasured(t))
			continue
		}
		t.Measured, t.Met = true, l.ZklockMS <= g.sec*1000
		t.Got = fmt.Sprintf("%.2f s", l.ZklockMS/1000)
		out = append(out, t)
	}
	return out
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
// and ran its command long enough records when it took the lock in its
// own node, which notifies its own session and the waiter behind it, who
// watches again without listing.
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

func metWord(t Target) string {
	switch {
	case !t.Measured:
		return "not measured"
	case t.Met:
		return "**met**"
	case t.Why != "":
		return "**not met**: " + t.Why
	default:
		return "**not met**"
	}
}
