//go:build linux

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// measureStorm starts cfg.StormContenders `zklock run --once-per` processes
// on one path as fast as the driver can, as a fleet's cron does on the
// hour: the job has never run, so exactly one of them must run it and every
// other one exit 75. It times the storm from its last start to its last
// exit, and reads the server's counters around it. It must run when no
// other zklock process is left.
func measureStorm(ctx context.Context, e *env, cfg Config, t *Tool, res *Results) error {
	n := cfg.StormContenders
	if n == 0 {
		return nil
	}
	s := &StormResult{Contenders: n}
	res.Storm = s
	if err := stormOne(ctx, e, cfg, t, s); err != nil {
		s.Error = err.Error()
		return err
	}
	logf("   %d contenders: done %.2f s after the last start (spread %.2f s); ran %d, skipped %d, other %d, left %d; per contender %.1f reads, %.1f writes, %.1f packets, %.2f ms CPU",
		n, s.DoneMS/1000, s.SpreadMS/1000, s.Runs, s.Skipped, s.Other, s.Left, s.ReadsPer, s.WritesPer, s.PacketsPer, s.CPUPerMS)
	return nil
}

func stormOne(ctx context.Context, e *env, cfg Config, t *Tool, s *StormResult) error {
	n := s.Contenders
	dir, err := os.MkdirTemp(filepath.Dir(e.lockDir), "storm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ran := filepath.Join(dir, "ran")
	// A path of its own per run: the job has no success recorded yet.
	path := fmt.Sprintf("/benchstorm/job-%d", time.Now().UnixNano())
	argv := t.argv(path, []string{e.shBin, "-c", `echo ran >> "$0"`, ran})
	// --once-per goes with run's flags, after the subcommand.
	argv = append(append(append([]string{}, argv[:2]...), "--once-per", stormWindow), argv[2:]...)

	base, err := mntr(ctx, e.zkAddr)
	if err != nil {
		return err
	}
	procs := make([]*proc, 0, n)
	var first, last time.Time
	for i := 0; i < n && ctx.Err() == nil; i++ {
		p, err := e.spawnFor(ctx, t, argv, nil, nil, "storm.log", cfg.CrowdTimeout)
		if err != nil {
			for _, q := range procs {
				q.cmd.Process.Signal(os.Interrupt)
				<-q.done
			}
			return err
		}
		if i == 0 {
			first = p.start
		}
		last = p.start
		procs = append(procs, p)
	}
	var lastEnd time.Time
	var cpu time.Duration
	for _, p := range procs {
		<-p.done
		if p.end.After(lastEnd) {
			lastEnd = p.end
		}
		cpu += p.cpu
		switch p.exitCode() {
		case 0:
		case 75:
			s.Skipped++
		default:
			s.Other++
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.SpreadMS = float64(last.Sub(first)) / 1e6
	s.DoneMS = float64(lastEnd.Sub(last)) / 1e6
	s.CPUPerMS = float64(cpu) / 1e6 / float64(n)
	if b, err := os.ReadFile(ran); err == nil {
		s.Runs = strings.Count(string(b), "\n")
	}
	// Every session closed: what is left is what zklock left.
	after, err := waitMntr(ctx, e.zkAddr, time.Minute, "the storm's sessions to close", func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] <= base["zk_ephemerals_count"] &&
			m["zk_num_alive_connections"] <= base["zk_num_alive_connections"]
	})
	if after == nil {
		return err
	}
	s.Left = int(max(after["zk_ephemerals_count"]-base["zk_ephemerals_count"], 0))
	if c, cerr := e.zkChildren(ctx, path); cerr == nil {
		// The success record is meant to stay; a contender's node is not.
		s.Left = max(s.Left, c-1)
	}
	per := func(k string) float64 { return float64(after[k]-base[k]) / float64(n) }
	s.ReadsPer = per("zk_cnt_readlatency")
	s.WritesPer = per("zk_cnt_updatelatency")
	s.PacketsPer = per("zk_packets_received")
	if s.Other > 0 {
		return fmt.Errorf("%d of %d contenders exited with neither 0 nor 75 (see storm.log)", s.Other, n)
	}
	return err
}
