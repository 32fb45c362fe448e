//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// queueCounters are the mntr counters whose change over a drain is kept.
// %s is the lock's top-level namespace: ZooKeeper 3.7+ counts reads and
// writes per first path component (zk_cnt_<ns>_read_per_namespace).
var queueCounters = []string{
	"zk_sum_node_deleted_watch_count", "zk_cnt_node_deleted_watch_count",
	"zk_sum_node_children_watch_count", "zk_sum_node_changed_watch_count", "zk_sum_node_created_watch_count",
	"zk_packets_received", "zk_packets_sent",
	"zk_cnt_readlatency", "zk_cnt_updatelatency",
	"zk_cnt_%s_read_per_namespace", "zk_cnt_%s_write_per_namespace",
}

func measureQueue(ctx context.Context, e *env, cfg Config, t *Tool, addr string, res *Results) error {
	dir, err := os.MkdirTemp(filepath.Dir(e.lockDir), "queue-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var errs []error
	for i, n := range cfg.QueueSizes {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		q := QueueResult{Waiters: n, Releases: n + 1, Handoffs: n}
		ns := fmt.Sprintf("benchq%d", n)
		if i > 0 && slicesIndex(cfg.QueueSizes[:i], n) >= 0 {
			ns = fmt.Sprintf("benchq%dr%d", n, i)
		}
		if err := queueOne(ctx, e, t, addr, dir, ns, &q); err != nil {
			q.Error = err.Error()
			errs = append(errs, fmt.Errorf("%d waiters: %w", n, err))
		}
		res.Queue = append(res.Queue, q)
		d := q.Deltas
		rel := float64(q.Releases)
		logf("   %3d waiters: drain %7.1f ms (%.2f ms/handoff), notifications %d (in %d events); per release: %.2f packets in, %.2f out, %.2f reads (%.2f pings), %.2f writes, %.2f znodes changed%s",
			n, q.DrainMS, q.DrainMS/float64(max(n, 1)), d["zk_sum_node_deleted_watch_count"], d["zk_cnt_node_deleted_watch_count"],
			float64(d["zk_packets_received"])/rel, float64(d["zk_packets_sent"])/rel,
			float64(d["zk_cnt_readlatency"])/rel, float64(d["pings"])/rel,
			float64(d["zk_cnt_updatelatency"])/rel, float64(d["ns_writes"])/rel, errSuffix(q.Error))
	}
	return errors.Join(errs...)
}

func slicesIndex(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func queueOne(ctx context.Context, e *env, t *Tool, addr, dir, ns string, q *QueueResult) error {
	path := "/" + ns + "/lock"
	n := q.Waiters
	// Start from a quiet server: no sessions left from earlier phases.
	idle, err := waitMntr(ctx, addr, time.Minute, "a quiet server", func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] == 0 && m["zk_watch_count"] == 0
	})
	if err != nil {
		return err
	}
	baseConns := idle["zk_num_alive_connections"]

	stampPath := filepath.Join(dir, ns+".stamps")
	stamps, err := os.OpenFile(stampPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer stamps.Close()
	fifo, err := makeFIFO(dir, ns+".fifo")
	if err != nil {
		return err
	}
	logName := "queue-" + ns + ".log"
	var procs []*proc
	abort := func(err error) error {
		fifoRelease(ctx, fifo, time.Second)
		for _, p := range procs {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			p.wait()
		}
		return err
	}
	holder, err := e.spawn(ctx, t, t.argv(path, append([]string{e.shBin, "-c", holdScript, fifo}, e.stamp...)), nil, stamps, logName)
	if err != nil {
		return err
	}
	procs = append(procs, holder)
	if _, err := waitMntr(ctx, addr, time.Minute, "the holder", func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] == 1
	}); err != nil {
		return abort(err)
	}
	for i := 0; i < n; i++ {
		p, err := e.spawn(ctx, t, t.argv(path, e.stamp), nil, stamps, logName)
		if err != nil {
			return abort(err)
		}
		procs = append(procs, p)
	}
	// Every waiter has joined and set its two watches (on the contender
	// ahead and on its own node), the holder watches its own node, and
	// nothing is in flight.
	if _, err := waitMntr(ctx, addr, 2*time.Minute, fmt.Sprintf("%d queued waiters", n), func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] == int64(n+1) && m["zk_watch_count"] == int64(2*n+1) && m["zk_outstanding_requests"] == 0
	}); err != nil {
		return abort(err)
	}
	time.Sleep(300 * time.Millisecond)
	var rss []int64
	for _, p := range procs[1:] {
		// The waiter and its children (zklock starts its watchdog shell
		// while it connects), as in the memory test.
		if r, _, n := procRSS(p.cmd.Process.Pid); n > 0 {
			rss = append(rss, r)
		}
	}
	q.WaiterRSSMedianKiB = medianInt(rss)
	for _, r := range rss {
		q.WaiterRSSMaxKiB = max(q.WaiterRSSMaxKiB, r)
	}

	before, err := mntr(ctx, addr)
	if err != nil {
		return abort(err)
	}
	if err := fifoRelease(ctx, fifo, 10*time.Second); err != nil {
		return abort(err)
	}
	var lastEnd time.Time
	var firstErr error
	for _, p := range procs {
		if _, err := p.wait(); err != nil && firstErr == nil {
			firstErr = err
		}
		if p.end.After(lastEnd) {
			lastEnd = p.end
		}
	}
	if firstErr != nil {
		return firstErr
	}
	// Every session closed (the 4lw connection that asks is one of them).
	after, err := waitMntr(ctx, addr, time.Minute, "the sessions to close", func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] == 0 && m["zk_num_alive_connections"] <= baseConns
	})
	if err != nil {
		return err
	}
	q.Deltas = map[string]int64{}
	for _, k := range queueCounters {
		key := k
		if strings.Contains(k, "%s") {
			key = fmt.Sprintf(k, ns)
		}
		q.Deltas[strings.Replace(k, "_%s_", "_NS_", 1)] = after[key] - before[key]
	}
	q.Deltas["ns_reads"] = q.Deltas["zk_cnt_NS_read_per_namespace"]
	q.Deltas["ns_writes"] = q.Deltas["zk_cnt_NS_write_per_namespace"]
	// readlatency counts every read-only request the server answered:
	// the lock path's reads, and go-zookeeper's pings.
	q.Deltas["pings"] = q.Deltas["zk_cnt_readlatency"] - q.Deltas["ns_reads"]

	st, err := readStamps(stampPath)
	if err != nil {
		return err
	}
	if len(st) != n+1 {
		return fmt.Errorf("%d stamps, want %d", len(st), n+1)
	}
	q.DrainMS = float64(lastEnd.UnixNano()-st[0]) / 1e6
	q.Handoff = distMS(stampGaps(st))
	return nil
}
