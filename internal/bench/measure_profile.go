//go:build linux

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func measureProfile(ctx context.Context, e *env, cfg Config, t *Tool, res *Results) error {
	if cfg.ProfileRuns == 0 {
		return nil
	}
	p := &Profile{Runs: cfg.ProfileRuns, Marks: true}
	res.Profile = p
	if err := measureFloors(ctx, e, cfg, t, p); err != nil {
		return err
	}

	at := make([][]float64, len(profilePhases))
	delta := make([][]float64, len(profilePhases))
	var totals []float64
	// Two uncounted runs first: the first one creates the lock path's
	// parents, which later runs find in place.
	for i := 0; i < 2; i++ {
		if _, _, err := profileRun(ctx, e, t); err != nil {
			p.Error = err.Error()
			return err
		}
	}
	before, merr := mntr(ctx, e.zkAddr)
	runs := 0
	defer func() {
		after, err := mntr(ctx, e.zkAddr)
		if merr != nil || err != nil || runs == 0 {
			return
		}
		d := func(k string) float64 { return float64(after[k]-before[k]) / float64(runs) }
		// The lock path /bench/zklock/profile is in the namespace "bench".
		p.ReadRequests = d("zk_cnt_readlatency")
		p.WriteRequests = d("zk_cnt_updatelatency")
		p.LockReads = d("zk_cnt_bench_read_per_namespace")
		p.LockWrites = d("zk_cnt_bench_write_per_namespace")
		p.PacketsIn = d("zk_packets_received")
		p.PacketsOut = d("zk_packets_sent")
		logf("   per run: %.2f read requests (%.2f on the lock path), %.2f write requests, %.2f znodes changed, %.2f packets in, %.2f out",
			p.ReadRequests, p.LockReads, p.WriteRequests, p.LockWrites, p.PacketsIn, p.PacketsOut)
	}()
	for i := 0; i < cfg.ProfileRuns && ctx.Err() == nil; i++ {
		runs++
		marks, total, err := profileRun(ctx, e, t)
		if err != nil {
			p.Error = err.Error()
			return err
		}
		totals = append(totals, total)
		prev := 0.0
		for j, m := range marks {
			if m < 0 {
				continue
			}
			at[j] = append(at[j], m)
			delta[j] = append(delta[j], m-prev)
			prev = m
		}
	}
	p.TotalMS = distMS(totals).P50
	for j, m := range profilePhases {
		p.Phases = append(p.Phases, ProfilePhase{Mark: m.mark, Meaning: m.meaning,
			AtMS: distMS(at[j]).P50, DeltaMS: distMS(delta[j]).P50, Seen: len(at[j])})
	}
	logf("   /bin/true %.2f ms, zklock version %.2f ms, zklock run -- true %.2f ms", p.TrueMS, p.VersionMS, p.TotalMS)
	for _, ph := range p.Phases {
		logf("   %-9s at %6.2f ms (+%5.2f ms)  %s", ph.Mark, ph.AtMS, ph.DeltaMS, ph.Meaning)
	}
	return nil
}

// profileRun runs `zklock run -- true` once with its phase marks on, and
// returns when (ms after the start) each phase was reached, -1 for a phase
// not marked, and the whole run's time.
func profileRun(ctx context.Context, e *env, t *Tool) ([]float64, float64, error) {
	argv := t.Argv("profile", e.trueBin)
	f, err := os.CreateTemp(filepath.Dir(e.lockDir), "marks-")
	if err != nil {
		return nil, 0, err
	}
	f.Close()
	defer os.Remove(f.Name())
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), marksEnv+"="+f.Name())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	total := float64(time.Since(start)) / 1e6
	if err != nil {
		return nil, 0, fmt.Errorf("zklock run: %v: %s", err, strings.TrimSpace(string(out)))
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return nil, 0, err
	}
	at, err := parseMarks(string(b), start)
	if err != nil {
		return nil, 0, err
	}
	at[len(at)-1] = total
	return at, total, nil
}

// measureFloors times the floors under a run: fork+exec of /bin/true, and
// zklock without the network (`zklock version`).
func measureFloors(ctx context.Context, e *env, cfg Config, t *Tool, p *Profile) error {
	var trues, versions []time.Duration
	for i := 0; i < cfg.ProfileRuns && ctx.Err() == nil; i++ {
		start := time.Now()
		if err := exec.CommandContext(ctx, e.trueBin).Run(); err != nil {
			return err
		}
		trues = append(trues, time.Since(start))
		start = time.Now()
		vctx, cancel := context.WithTimeout(ctx, e.timeout)
		err := exec.CommandContext(vctx, t.argv("/x", nil)[0], "version").Run()
		cancel()
		if err != nil {
			return err
		}
		versions = append(versions, time.Since(start))
	}
	p.TrueMS = distMS(durationsMS(trues)).P50
	p.VersionMS = distMS(durationsMS(versions)).P50
	return nil
}
