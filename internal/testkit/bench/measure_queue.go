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
	procs, err := startQueue(ctx, e, t, addr, path, fifo, stamps, n, "queue-"+ns+".log")
	if err != nil {
		return err
	}
	abort := func(err error) error { return stopQueue(ctx, fifo, procs, err) }
	time.Sleep(300 * time.Millisecond)
	q.WaiterRSSMedianKiB, q.WaiterRSSMaxKiB = waitersRSS(procs[1:])

	before, err := mntr(ctx, addr)
	if err != nil {
		return abort(err)
	}
	if err := fifoRelease(ctx, fifo, 10*time.Second); err != nil {
		return abort(err)
	}
	lastEnd, err := waitAll(procs)
	if err != nil {
		return err
	}
	// Every session closed (the 4lw connection that asks is one of them).
	after, err := waitMntr(ctx, addr, time.Minute, "the sessions to close", func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] == 0 && m["zk_num_alive_connections"] <= baseConns
	})
	if err != nil {
		return err
	}
	q.Deltas = queueDeltas(before, after, ns)

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

// waitersRSS is the median and the largest resident set of the waiters,
// each with its children (its watchdog, once it is next in line), as
// in the memory test.
func waitersRSS(waiters []*proc) (median, largest int64) {
	var rss []int64
	for _, p := range waiters {
		if r, _, n := procRSS(p.cmd.Process.Pid); n > 0 {
			rss = append(rss, r)
		}
	}
	for _, r := range rss {
		largest = max(largest, r)
	}
	return medianInt(rss), largest
}

// waitAll waits for every process and returns when the last one ended, and
// the first failure.
func waitAll(procs []*proc) (lastEnd time.Time, err error) {
	for _, p := range procs {
		if _, werr := p.wait(); werr != nil && err == nil {
			err = werr
		}
		if p.end.After(lastEnd) {
			lastEnd = p.end
		}
	}
	return lastEnd, err
}

// queueDeltas is what the server counted between two mntr snapshots, the
// per-namespace counters under an NS key.
func queueDeltas(before, after map[string]int64, ns string) map[string]int64 {
	d := map[string]int64{}
	for _, k := range queueCounters {
		key := k
		if strings.Contains(k, "%s") {
			key = fmt.Sprintf(k, ns)
		}
		d[strings.Replace(k, "_%s_", "_NS_", 1)] = after[key] - before[key]
	}
	d["ns_reads"] = d["zk_cnt_NS_read_per_namespace"]
	d["ns_writes"] = d["zk_cnt_NS_write_per_namespace"]
	// readlatency counts every read-only request the server answered:
	// the lock path's reads, and go-zookeeper's pings.
	d["pings"] = d["zk_cnt_readlatency"] - d["ns_reads"]
	return d
}

// startQueue starts the holder, which holds until fifo is written, then n
// waiters, and returns once every waiter is queued and the server is idle.
// On failure it stops what it started.
func startQueue(ctx context.Context, e *env, t *Tool, addr, path, fifo string, stamps *os.File, n int, logName string) ([]*proc, error) {
	var procs []*proc
	holder, err := e.spawn(ctx, t, t.argv(path, append([]string{e.shBin, "-c", holdScript, fifo}, e.stamp...)), nil, stamps, logName)
	if err != nil {
		return nil, err
	}
	procs = append(procs, holder)
	if _, err := waitMntr(ctx, addr, time.Minute, "the holder", func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] == 1
	}); err != nil {
		return nil, stopQueue(ctx, fifo, procs, err)
	}
	for i := 0; i < n; i++ {
		p, err := e.spawn(ctx, t, t.argv(path, e.stamp), nil, stamps, logName)
		if err != nil {
			return nil, stopQueue(ctx, fifo, procs, err)
		}
		procs = append(procs, p)
	}
	// Every waiter has joined and set its two watches (on the contender
	// ahead and on its own node), the holder watches its own node, each
	// of them watches the ensemble's configuration (/zookeeper/config, to
	// follow a reconfiguration), and nothing is in flight.
	if _, err := waitMntr(ctx, addr, 2*time.Minute, fmt.Sprintf("%d queued waiters", n), func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] == int64(n+1) && m["zk_watch_count"] == int64(3*n+2) && m["zk_outstanding_requests"] == 0
	}); err != nil {
		return nil, stopQueue(ctx, fifo, procs, err)
	}
	return procs, nil
}

// stopQueue releases the holder, stops every process and returns err.
func stopQueue(ctx context.Context, fifo string, procs []*proc, err error) error {
	fifoRelease(ctx, fifo, time.Second)
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		p.wait()
	}
	return err
}
