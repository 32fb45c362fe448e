//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/testkit/zktest"
)

// idleSessionTimeout is the waiters' session timeout, zklock's default;
// go-zookeeper pings once per third of it.
const idleSessionTimeout = 10 * time.Second

// idleSamples is how many waiters deep in the queue have their memory read.
const idleSamples = 20

// measureIdle queues cfg.IdleWaiters zklock waiters behind a holder that is
// a node of a session of the driver's own, so that for cfg.IdleWindow the
// server hears from nothing but the waiters (and that one session's
// pings). It reads the server's counters over the window, and the memory
// of waiters deep in the queue, whose place is the usual one for a waiter
// of a busy lock. It must run when no other zklock process is left.
func measureIdle(ctx context.Context, e *env, cfg Config, t *Tool, res *Results) error {
	n := cfg.IdleWaiters
	if n == 0 {
		return nil
	}
	r := &IdleResult{Waiters: n, SessionTimeoutMS: idleSessionTimeout.Milliseconds(),
		PingsPerSec: 3 / idleSessionTimeout.Seconds()}
	res.Idle = r
	err := idleOne(ctx, e, cfg, t, r)
	if err != nil {
		r.Error = err.Error()
		return err
	}
	logf("   %d idle waiters: %.3f packets/s each (pings alone: %.3f/s), %.3f reads/s, %.3f writes/s; a deep waiter: Private_Dirty median %.2f MiB, largest %.2f MiB, at most %s",
		n, r.PacketsPerSec, r.PingsPerSec, r.ReadsPerSec, r.WritesPerSec,
		float64(r.PrivateMedianKiB)/1024, float64(r.PrivateMaxKiB)/1024, processes(r.ProcessesMax))
	return nil
}

func idleOne(ctx context.Context, e *env, cfg Config, t *Tool, r *IdleResult) error {
	const path = "/benchidle/lock"
	n := r.Waiters
	holder, err := zktest.Dial(ctx, []string{e.zkAddr})
	if err != nil {
		return err
	}
	defer holder.Close()
	if err := holdWith(holder, path); err != nil {
		return fmt.Errorf("the holder's node: %w", err)
	}
	base, err := mntr(ctx, e.zkAddr)
	if err != nil {
		return err
	}
	start := time.Now()
	procs := make([]*proc, 0, n)
	stop := func(err error) error {
		// SIGTERM ends a wait at once: each waiter deletes its node and
		// exits (the waiter behind it lists the queue again).
		for _, p := range procs {
			p.cmd.Process.Signal(os.Interrupt)
		}
		for _, p := range procs {
			<-p.done
		}
		return err
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		p, err := e.spawnFor(ctx, t, t.argv(path, []string{e.trueBin}), nil, nil, "idle.log", cfg.CrowdTimeout)
		if err != nil {
			return stop(err)
		}
		procs = append(procs, p)
	}
	if err := ctx.Err(); err != nil {
		return stop(err)
	}
	// Every waiter has joined and set its two watches (on the contender
	// ahead and on its own node), and nothing is in flight.
	within := max(2*time.Minute, time.Duration(n)*100*time.Millisecond)
	if _, err := waitMntr(ctx, e.zkAddr, within, fmt.Sprintf("%d queued waiters", n), func(m map[string]int64) bool {
		return m["zk_ephemerals_count"]-base["zk_ephemerals_count"] >= int64(n) &&
			m["zk_watch_count"]-base["zk_watch_count"] >= int64(2*n) && m["zk_outstanding_requests"] == 0
	}); err != nil {
		return stop(err)
	}
	r.StartSeconds = time.Since(start).Seconds()
	// Past the starts' own requests, and a ping or two into the wait.
	time.Sleep(time.Second)

	before, err := mntr(ctx, e.zkAddr)
	if err != nil {
		return stop(err)
	}
	windowStart := time.Now()
	select {
	case <-time.After(cfg.IdleWindow):
	case <-ctx.Done():
		return stop(ctx.Err())
	}
	after, err := mntr(ctx, e.zkAddr)
	if err != nil {
		return stop(err)
	}
	window := time.Since(windowStart)
	r.WindowMS = window.Milliseconds()
	per := func(k string) float64 { return float64(after[k]-before[k]) / float64(n) / window.Seconds() }
	r.PacketsPerSec = per("zk_packets_received")
	r.ReadsPerSec = per("zk_cnt_readlatency")
	r.WritesPerSec = per("zk_cnt_updatelatency")

	// The memory of waiters deep in the queue: the first few, next in
	// line, start their watchdog early, as they should.
	var private []int64
	for i := min(10, n/2); i < n && len(private) < idleSamples; i += max(1, (n-10)/idleSamples) {
		kib, np := procPrivate(procs[i].cmd.Process.Pid)
		if np == 0 {
			continue
		}
		private = append(private, kib)
		r.PrivateMaxKiB = max(r.PrivateMaxKiB, kib)
		r.ProcessesMax = max(r.ProcessesMax, np)
	}
	r.Sampled = len(private)
	r.PrivateMedianKiB = medianInt(private)
	for _, p := range procs {
		pid := p.cmd.Process.Pid
		r.Processes += 1 + len(descendants(pid))
		r.PssTotalKiB += procPss(pid)
	}
	if r.Sampled == 0 {
		return stop(errors.New("no waiter's memory could be read"))
	}
	return stop(nil)
}

// holdWith makes the session conn the holder of the lock at path: a
// contender node at the head of the queue, named as Curator names them.
func holdWith(conn *zk.Conn, path string) error {
	acl := zk.WorldACL(zk.PermAll)
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		if _, err := conn.CreateContainer(path[:i], nil, zk.FlagContainer, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	_, err := conn.Create(path+"/_c_00000000-0000-4000-8000-000000000000-lock-", []byte("bench holder"), zk.FlagEphemeralSequential, acl)
	return err
}
