//go:build linux

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

func measureHandoff(ctx context.Context, e *env, cfg Config, tools []*Tool, res *Results) error {
	dir, err := os.MkdirTemp(filepath.Dir(e.lockDir), "handoff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// The floor: two probes, started back to back by the driver.
	var floor []float64
	for i := 0; i < cfg.FloorRounds && ctx.Err() == nil; i++ {
		out := filepath.Join(dir, "floor")
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		for j := 0; j < 2; j++ {
			c := exec.Command(e.stamp[0], e.stamp[1:]...)
			c.Stdout = f
			if err := c.Run(); err != nil {
				f.Close()
				return fmt.Errorf("%s: %w", e.stamp[0], err)
			}
		}
		f.Close()
		st, err := readStamps(out)
		if err != nil {
			return err
		}
		floor = append(floor, stampGaps(st)...)
	}
	d := distMS(floor)
	res.HandoffFloor = &d
	logf("   floor (%s, then again) p50 %.3f ms", res.HandoffProbe, d.P50)

	waitersFor := func(t *Tool) int {
		return byClass(t, cfg.HandoffWaiters, cfg.HandoffWaitersPython, cfg.HandoffWaitersJVM)
	}
	sp, err := measureServerPart(ctx, e, cfg.FloorRounds, cfg.HandoffWaiters)
	if err != nil {
		return fmt.Errorf("ZooKeeper's part of a handoff: %w", err)
	}
	res.ServerPart = sp
	logf("   ZooKeeper alone: session close to watch event p50 %.3f ms, getChildren of %d nodes p50 %.3f ms",
		sp.CloseToWatch.P50, sp.QueueLen, sp.ListQueue.P50)

	logf("   a queue of waiters behind one holder")
	res.Handoff = handoffRounds(ctx, e, tools, dir, "handoff", waitersFor, func(*Tool) int { return cfg.HandoffRounds })
	// The next in line alone: the usual case for a cron job or a CI stage,
	// and the one where a zklock waiter, which watched the holder itself,
	// knows it holds the lock without listing the queue again.
	logf("   one waiter behind one holder")
	pairRounds := func(t *Tool) int {
		return byClass(t, cfg.HandoffPairRounds, cfg.HandoffPairRoundsSlow, cfg.HandoffPairRoundsSlow)
	}
	res.HandoffPair = handoffRounds(ctx, e, tools, dir, "pair", func(*Tool) int { return 1 }, pairRounds)
	return ctx.Err()
}

// handoffRounds runs rounds of handoffRound for every tool and collects the
// gaps. Rounds are outside and tools inside, so that a change in the
// machine's load affects every tool alike.
func handoffRounds(ctx context.Context, e *env, tools []*Tool, dir, label string, waiters, rounds func(*Tool) int) []HandoffResult {
	results := make([]HandoffResult, len(tools))
	gaps := make([][]float64, len(tools))
	most := 0
	for i, t := range tools {
		results[i] = HandoffResult{Tool: t.Key, Waiters: waiters(t)}
		most = max(most, rounds(t))
	}
	for round := 0; round < most && ctx.Err() == nil; round++ {
		for i, t := range tools {
			hr := &results[i]
			if hr.Error != "" || round >= rounds(t) {
				continue
			}
			g, err := handoffRound(ctx, e, t, dir, fmt.Sprintf("%s-%d", label, round), hr.Waiters)
			if err != nil {
				hr.Error = err.Error()
				continue
			}
			gaps[i] = append(gaps[i], g...)
			hr.Rounds++
		}
	}
	for i, t := range tools {
		hr := &results[i]
		hr.Dist = distMS(gaps[i])
		logf("   %-20s p50 %7.2f ms  p99 %7.2f ms  (%d handoffs)%s", t.Name, hr.Dist.P50, hr.Dist.P99, hr.Dist.N, errSuffix(hr.Error))
	}
	return results
}

func errSuffix(s string) string {
	if s == "" {
		return ""
	}
	return "  error: " + s
}

// handoffRound queues waiters behind a holder, releases the holder, and
// returns the stamp-to-stamp gaps between consecutive holders.
func handoffRound(ctx context.Context, e *env, t *Tool, dir, label string, waiters int) ([]float64, error) {
	stampPath := filepath.Join(dir, t.Key+"-"+label+".stamps")
	stamps, err := os.OpenFile(stampPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer stamps.Close()
	fifo, err := makeFIFO(dir, t.Key+"-"+label+".fifo")
	if err != nil {
		return nil, err
	}
	logName := "handoff-" + t.Key + ".log"
	var procs []*proc
	cleanup := func() {
		// On failure: let the holder go, then stop what is left.
		fifoRelease(ctx, fifo, time.Second)
		for _, p := range procs {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			p.wait()
		}
	}
	holder, err := e.spawn(ctx, t, t.Argv(label, append([]string{e.shBin, "-c", holdScript, fifo}, e.stamp...)...), nil, stamps, logName)
	if err != nil {
		return nil, err
	}
	procs = append(procs, holder)
	if err := waitCount(ctx, t, label, 1, time.Minute); err != nil {
		cleanup()
		return nil, err
	}
	for i := 0; i < waiters; i++ {
		p, err := e.spawn(ctx, t, t.Argv(label, e.stamp...), nil, stamps, logName)
		if err != nil {
			cleanup()
			return nil, err
		}
		procs = append(procs, p)
	}
	if err := waitCount(ctx, t, label, waiters+1, 2*time.Minute); err != nil {
		cleanup()
		return nil, err
	}
	time.Sleep(settleFor(t))
	if err := fifoRelease(ctx, fifo, 10*time.Second); err != nil {
		cleanup()
		return nil, err
	}
	var firstErr error
	for _, p := range procs {
		if _, err := p.wait(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	st, err := readStamps(stampPath)
	if err != nil {
		return nil, err
	}
	if len(st) != waiters+1 {
		return nil, fmt.Errorf("%s: %d stamps, want %d", t.Name, len(st), waiters+1)
	}
	return stampGaps(st), nil
}
