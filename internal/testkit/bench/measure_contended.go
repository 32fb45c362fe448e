//go:build linux

package bench

import (
	"context"
	"fmt"
	"sync"
	"time"
)

func measureContended(ctx context.Context, e *env, cfg Config, tools []*Tool, res *Results) error {
	// Loop counts outside, tools inside: the cells that are compared with
	// each other run close together in time.
	for _, loops := range cfg.ContendedLoops {
		for _, t := range tools {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r := ThroughputResult{Tool: t.Key, Loops: loops}
			start := "a process start"
			if l := res.latency(t.Key); l != nil {
				start = fmt.Sprintf("a start that takes %.0f ms uncontended here", l.Dist.P50)
			}
			switch {
			case t.Class == "python" && loops > cfg.ContendedMaxLoopsPython:
				r.Skipped = fmt.Sprintf("more than BENCH_CONTENDED_MAX_LOOPS_PYTHON=%d loops: every acquisition is a Python interpreter start (%s), so %d of them at once on %d cores measure the scheduler, not the lock",
					cfg.ContendedMaxLoopsPython, start, loops, res.Machine.Cores)
			case t.Class == "jvm" && loops > cfg.ContendedMaxLoopsJVM:
				r.Skipped = fmt.Sprintf("more than BENCH_CONTENDED_MAX_LOOPS_JVM=%d loops: every acquisition is a JVM start (%s, most of it CPU), so %d of them at once on %d cores measure the scheduler, not the lock",
					cfg.ContendedMaxLoopsJVM, start, loops, res.Machine.Cores)
			}
			if r.Skipped == "" {
				contendedCell(ctx, e, cfg, t, &r)
				logf("   %-20s %3d loops: %8.1f acquisitions/s (%d in %.1fs, %.2f ms CPU each, %d errors)", t.Name, loops, r.PerSecond, r.Acquisitions, r.Seconds, r.CPUPerAcqMS, r.Errors)
			}
			res.Contended = append(res.Contended, r)
		}
	}
	return nil
}

func contendedCell(ctx context.Context, e *env, cfg Config, t *Tool, r *ThroughputResult) {
	label := fmt.Sprintf("contended-%d", r.Loops)
	argv := t.Argv(label, e.trueBin)
	logName := "contended-" + t.Key + ".log"
	start := time.Now()
	t0 := start.Add(cfg.ContendedWarmup)
	t1 := t0.Add(cfg.ContendedWindow)
	const maxErrors = 20
	var (
		mu       sync.Mutex
		ends     []time.Time
		cpus     []time.Duration
		errCount int
		firstErr error
		wg       sync.WaitGroup
	)
	for l := 0; l < r.Loops; l++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(t1) && ctx.Err() == nil {
				p, err := e.spawn(ctx, t, argv, nil, nil, logName)
				if err == nil {
					_, err = p.wait()
				}
				mu.Lock()
				if err != nil {
					errCount++
					if firstErr == nil {
						firstErr = err
					}
				} else {
					ends = append(ends, p.end)
					cpus = append(cpus, p.cpu)
				}
				tooMany := errCount >= maxErrors
				mu.Unlock()
				if tooMany {
					return
				}
				if err != nil {
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	var cpu time.Duration
	for i, end := range ends {
		if !end.Before(t0) && !end.After(t1) {
			n++
			cpu += cpus[i]
		}
	}
	if n > 0 {
		r.CPUPerAcqMS = float64(cpu) / 1e6 / float64(n)
	}
	r.Acquisitions = n
	r.Seconds = cfg.ContendedWindow.Seconds()
	r.PerSecond = float64(n) / r.Seconds
	r.Errors = errCount
	if firstErr != nil {
		r.Error = firstErr.Error()
	}
}
