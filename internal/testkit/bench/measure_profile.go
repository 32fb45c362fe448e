//go:build linux

package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func measureProfile(ctx context.Context, e *env, cfg Config, t, minimal *Tool, res *Results) error {
	if cfg.ProfileRuns == 0 {
		return nil
	}
	p := &Profile{Runs: cfg.ProfileRuns, Marks: true}
	res.Profile = p
	if err := measureFloors(ctx, e, cfg, t, p); err != nil {
		return err
	}
	if err := measureCosts(ctx, e, cfg, t, minimal, p); err != nil {
		return err
	}
	if minimal != nil {
		c, err := countRuns(ctx, e, minimal, cfg.ProfileRuns)
		if err != nil {
			return fmt.Errorf("%s: %w", minimal.Name, err)
		}
		p.Minimal = c
		logf("   %s per run: %.2f read requests, %.2f write requests, %.2f packets in, %.2f out",
			minimal.Name, c.ReadRequests, c.WriteRequests, c.PacketsIn, c.PacketsOut)
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

// costProbe is one process that measureCosts runs.
type costProbe struct {
	what, meaning string
	argv          []string
}

// measureCosts splits what a run costs into the processes it starts and
// their start-up, each a process the driver runs ProfileRuns times,
// interleaved, timing its wall clock and its CPU time (rusage): the fork
// and exec floor, the Go runtime's start (the minimal runner refusing its
// arguments), and zklock's start (its package initialisation and command
// line, `zklock version`). zklock's watchdog is not among them: it is
// forked from zklock without an exec, so its cost is part of the run's.
func measureCosts(ctx context.Context, e *env, cfg Config, zl, minimal *Tool, p *Profile) error {
	zbin := zl.argv("/x", nil)[0]
	probes := []costProbe{
		{what: "`true`", meaning: "fork, exec and exit of a small C program: the floor under every process", argv: []string{e.trueBin}},
	}
	if minimal != nil {
		probes = append(probes, costProbe{what: "minimal runner, no arguments",
			meaning: "the Go runtime's start and exit (it refuses its arguments at once)", argv: []string{minimal.argv("/x", nil)[0]}})
	}
	probes = append(probes,
		costProbe{what: "`zklock version`", meaning: "zklock's start: the runtime, the package initialisation of everything linked (the Kerberos stack's included) and the command line", argv: []string{zbin, "version"}})
	wall := make([][]float64, len(probes))
	cpu := make([][]float64, len(probes))
	for i := 0; i < cfg.ProfileRuns && ctx.Err() == nil; i++ {
		for j, pr := range probes {
			w, c, err := costOnce(ctx, e, pr)
			if err != nil {
				return fmt.Errorf("%s: %w", pr.what, err)
			}
			wall[j] = append(wall[j], w)
			cpu[j] = append(cpu[j], c)
		}
	}
	for j, pr := range probes {
		p.Costs = append(p.Costs, Cost{What: pr.what, Meaning: pr.meaning, N: len(wall[j]),
			WallMS: distMS(wall[j]).P50, CPUMS: distMS(cpu[j]).P50})
		logf("   %-32s wall %6.2f ms  CPU %6.2f ms", pr.what, distMS(wall[j]).P50, distMS(cpu[j]).P50)
	}
	return ctx.Err()
}

// costOnce runs one probe and returns its wall and CPU milliseconds.
func costOnce(ctx context.Context, e *env, pr costProbe) (wall, cpu float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, pr.argv[0], pr.argv[1:]...)
	start := time.Now()
	err = cmd.Run()
	wall = float64(time.Since(start)) / 1e6
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return 0, 0, err
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	}
	return wall, cpu, nil
}

// countRuns runs `TOOL -- true` n times on one lock and returns the
// server's counters per run.
func countRuns(ctx context.Context, e *env, t *Tool, n int) (*RunCounts, error) {
	// The first run creates the lock path's parents.
	if _, err := e.run(ctx, t, t.Argv("counted", e.trueBin), nil, "counted-"+t.Key+".log"); err != nil {
		return nil, err
	}
	before, err := mntr(ctx, e.zkAddr)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		if _, err := e.run(ctx, t, t.Argv("counted", e.trueBin), nil, "counted-"+t.Key+".log"); err != nil {
			return nil, err
		}
	}
	after, err := mntr(ctx, e.zkAddr)
	if err != nil {
		return nil, err
	}
	d := func(k string) float64 { return float64(after[k]-before[k]) / float64(n) }
	return &RunCounts{Runs: n, ReadRequests: d("zk_cnt_readlatency"), WriteRequests: d("zk_cnt_updatelatency"),
		PacketsIn: d("zk_packets_received"), PacketsOut: d("zk_packets_sent")}, nil
}
