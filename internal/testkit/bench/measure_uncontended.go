//go:build linux

package bench

import (
	"context"
	"time"
)

func measureUncontended(ctx context.Context, e *env, cfg Config, tools []*Tool, res *Results) error {
	runs := func(t *Tool) int {
		return byClass(t, cfg.UncontendedRuns, cfg.UncontendedRunsPython, cfg.UncontendedRunsJVM)
	}
	const maxErrors = 3
	samples := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	errs := map[string]int{}
	lastErr := map[string]error{}
	one := func(t *Tool) {
		if errs[t.Key] >= maxErrors {
			return
		}
		p, err := e.spawn(ctx, t, t.Argv("uncontended", e.trueBin), nil, nil, "uncontended-"+t.Key+".log")
		var d time.Duration
		if err == nil {
			d, err = p.wait()
		}
		if err != nil {
			errs[t.Key]++
			lastErr[t.Key] = err
			return
		}
		samples[t.Key] = append(samples[t.Key], d)
		cpu[t.Key] = append(cpu[t.Key], p.cpu)
	}
	for _, t := range tools {
		for i := 0; i < cfg.UncontendedWarmup; i++ {
			one(t)
		}
		samples[t.Key], cpu[t.Key] = nil, nil
	}
	// Round-robin, so that a drift in the machine's state (other load, the
	// server's JIT) affects every tool alike.
	most := 0
	for _, t := range tools {
		most = max(most, runs(t))
	}
	for i := 0; i < most && ctx.Err() == nil; i++ {
		for _, t := range tools {
			if i < runs(t) {
				one(t)
			}
		}
	}
	for _, t := range tools {
		r := LatencyResult{Tool: t.Key, Dist: distMS(durationsMS(samples[t.Key])), CPU: distMS(durationsMS(cpu[t.Key])), Errors: errs[t.Key]}
		if lastErr[t.Key] != nil {
			r.Error = lastErr[t.Key].Error()
		}
		res.Uncontended = append(res.Uncontended, r)
		logf("   %-20s median %7.2f ms  p90 %7.2f ms  CPU median %6.2f ms  (%d runs, %d errors)", t.Name, r.Dist.P50, r.Dist.P90, r.CPU.P50, r.Dist.N, r.Errors)
	}
	return ctx.Err()
}
