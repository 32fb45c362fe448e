package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// holdScript is the holder's command in the handoff, memory and queue
// tests: it blocks until the driver opens and closes the FIFO ($0), then
// becomes the probe (its arguments), whose output is the moment the
// holder's command ends (the probe exits right after printing).
const holdScript = `read _ < "$0"; exec "$@"`

// holdOnlyScript blocks until released and prints nothing. `read` fails
// at end of file, which is what the release is, hence the `|| :`.
const holdOnlyScript = `read _ < "$0" || :`

// byClass picks the value for the tool's class: a native binary, a Python
// interpreter or a JVM, whose start-ups differ by orders of magnitude.
func byClass[T any](t *Tool, native, python, jvm T) T {
	switch t.Class {
	case "python":
		return python
	case "jvm":
		return jvm
	}
	return native
}

func settleFor(t *Tool) time.Duration {
	return byClass(t, 500*time.Millisecond, time.Second, 2*time.Second)
}

// ---------------------------------------------------------------- uncontended

func measureUncontended(ctx context.Context, e *env, cfg Config, tools []*Tool, res *Results) error {
	runs := func(t *Tool) int {
		return byClass(t, cfg.UncontendedRuns, cfg.UncontendedRunsPython, cfg.UncontendedRunsJVM)
	}
	const maxErrors = 3
	samples := map[string][]time.Duration{}
	errs := map[string]int{}
	lastErr := map[string]error{}
	one := func(t *Tool) {
		if errs[t.Key] >= maxErrors {
			return
		}
		d, err := e.run(ctx, t, t.Argv("uncontended", e.trueBin), nil, "uncontended-"+t.Key+".log")
		if err != nil {
			errs[t.Key]++
			lastErr[t.Key] = err
			return
		}
		samples[t.Key] = append(samples[t.Key], d)
	}
	for _, t := range tools {
		for i := 0; i < cfg.UncontendedWarmup; i++ {
			one(t)
		}
		samples[t.Key] = nil
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
		r := LatencyResult{Tool: t.Key, Dist: distMS(durationsMS(samples[t.Key])), Errors: errs[t.Key]}
		if lastErr[t.Key] != nil {
			r.Error = lastErr[t.Key].Error()
		}
		res.Uncontended = append(res.Uncontended, r)
		logf("   %-20s median %7.2f ms  p90 %7.2f ms  (%d runs, %d errors)", t.Name, r.Dist.P50, r.Dist.P90, r.Dist.N, r.Errors)
	}
	return ctx.Err()
}

// ---------------------------------------------------------------- contended

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
				logf("   %-20s %3d loops: %8.1f acquisitions/s (%d in %.1fs, %d errors)", t.Name, loops, r.PerSecond, r.Acquisitions, r.Seconds, r.Errors)
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
	for _, end := range ends {
		if !end.Before(t0) && !end.After(t1) {
			n++
		}
	}
	r.Acquisitions = n
	r.Seconds = cfg.ContendedWindow.Seconds()
	r.PerSecond = float64(n) / r.Seconds
	r.Errors = errCount
	if firstErr != nil {
		r.Error = firstErr.Error()
	}
}

// ---------------------------------------------------------------- handoff

// fifoRelease opens the FIFO for writing and closes it, which ends the
// holder's `read`. Opening without a reader fails (ENXIO), so it retries
// until the holder's shell has opened its end.
func fifoRelease(ctx context.Context, fifo string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f.Close()
		}
		if !errors.Is(err, syscall.ENXIO) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the holder never opened %s", fifo)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func makeFIFO(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		return "", fmt.Errorf("mkfifo %s: %w", p, err)
	}
	return p, nil
}

// readStamps reads the nanosecond timestamps printed by the probe, sorted.
func readStamps(path string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: unexpected line %q", path, s)
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, sc.Err()
}

func stampGaps(stamps []int64) []float64 {
	var out []float64
	for i := 1; i < len(stamps); i++ {
		out = append(out, float64(stamps[i]-stamps[i-1])/1e6)
	}
	return out
}

func measureHandoff(ctx context.Context, e *env, cfg Config, tools []*Tool, res *Results) error {
	dir, err := os.MkdirTemp(filepath.Dir(e.lockDir), "handoff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// The floor: two probes, started back to back by the driver.
	var floor []float64
	for i := 0; i < 100 && ctx.Err() == nil; i++ {
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
	sp, err := measureServerPart(ctx, e, 100, cfg.HandoffWaiters)
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

// ---------------------------------------------------------------- memory

func measureMemory(ctx context.Context, e *env, cfg Config, tools []*Tool, res *Results) error {
	dir, err := os.MkdirTemp(filepath.Dir(e.lockDir), "memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, t := range tools {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m := MemoryResult{Tool: t.Key}
		if err := memoryOne(ctx, e, t, dir, &m); err != nil {
			m.Error = err.Error()
		}
		res.Memory = append(res.Memory, m)
		logf("   %-20s waiting: VmRSS %6.1f MiB (peak %.1f MiB, %d process(es))%s", t.Name,
			float64(m.RSSKiB)/1024, float64(m.HWMKiB)/1024, m.Processes, errSuffix(m.Error))
	}
	return nil
}

func memoryOne(ctx context.Context, e *env, t *Tool, dir string, m *MemoryResult) error {
	const label = "memory"
	fifo, err := makeFIFO(dir, t.Key+".fifo")
	if err != nil {
		return err
	}
	logName := "memory-" + t.Key + ".log"
	holder, err := e.spawn(ctx, t, t.Argv(label, e.shBin, "-c", holdOnlyScript, fifo), nil, nil, logName)
	if err != nil {
		return err
	}
	procs := []*proc{holder}
	finish := func() error {
		rerr := fifoRelease(ctx, fifo, 10*time.Second)
		var firstErr error
		for _, p := range procs {
			if rerr != nil {
				p.cmd.Process.Signal(syscall.SIGTERM)
			}
			if _, err := p.wait(); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		return errors.Join(rerr, firstErr)
	}
	if err := waitCount(ctx, t, label, 1, time.Minute); err != nil {
		return errors.Join(err, finish())
	}
	waiter, err := e.spawn(ctx, t, t.Argv(label, e.trueBin), nil, nil, logName)
	if err != nil {
		return errors.Join(err, finish())
	}
	procs = append(procs, waiter)
	if err := waitCount(ctx, t, label, 2, time.Minute); err != nil {
		return errors.Join(err, finish())
	}
	time.Sleep(2 * settleFor(t))
	m.RSSKiB, m.HWMKiB, m.Processes = procRSS(waiter.cmd.Process.Pid)
	return finish()
}

// ---------------------------------------------------------------- profile

// profileMarks are zklock -v progress lines, in the order they appear, and
// what the time up to each one is spent on.
var profileMarks = []struct{ prefix, mark, meaning string }{
	{"zklock: zk: connected to", "tcp", "process start, Go runtime, CLI parsing, TCP connect"},
	{"zklock: zk: authenticated", "session", "ConnectRequest round trip: the session is established"},
	{"zklock: connected to", "dialed", "go-zookeeper hands the session to zklock"},
	{"zklock: acquired", "acquired", "join the queue (create) and see that we are first (getChildren)"},
	{"zklock: session timeout", "command", "prepare the command (fencing token, environment); it is about to start"},
	{"zklock: released", "released", "run the command (fork, exec, wait) and release the lock"},
	{"", "exit", "the rest: closing the session if not done yet, process exit"},
}

func measureProfile(ctx context.Context, e *env, cfg Config, t *Tool, res *Results) error {
	if cfg.ProfileRuns == 0 {
		return nil
	}
	p := &Profile{Runs: cfg.ProfileRuns}
	res.Profile = p
	// The floors: fork+exec of /bin/true, and zklock without the network.
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

	at := make([][]float64, len(profileMarks))
	delta := make([][]float64, len(profileMarks))
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
	for j, m := range profileMarks {
		p.Phases = append(p.Phases, ProfilePhase{Mark: m.mark, Meaning: m.meaning,
			AtMS: distMS(at[j]).P50, DeltaMS: distMS(delta[j]).P50, Seen: len(at[j])})
	}
	logf("   /bin/true %.2f ms, zklock version %.2f ms, zklock -v run -- true %.2f ms", p.TrueMS, p.VersionMS, p.TotalMS)
	for _, ph := range p.Phases {
		logf("   %-9s at %6.2f ms (+%5.2f ms)  %s", ph.Mark, ph.AtMS, ph.DeltaMS, ph.Meaning)
	}
	return nil
}

// profileRun runs `zklock -v run -- true` once and returns when (ms after
// the start) each mark's line arrived, -1 for a mark not seen.
func profileRun(ctx context.Context, e *env, t *Tool) ([]float64, float64, error) {
	argv := t.Argv("profile", e.trueBin)
	// -v goes before the subcommand, as a persistent flag.
	argv = append([]string{argv[0], "-v"}, argv[1:]...)
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, 0, err
	}
	marks := make([]float64, len(profileMarks))
	for i := range marks {
		marks[i] = -1
	}
	var lines []string
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		now := float64(time.Since(start)) / 1e6
		l := sc.Text()
		lines = append(lines, l)
		for j, m := range profileMarks {
			if m.prefix != "" && marks[j] < 0 && strings.HasPrefix(l, m.prefix) {
				marks[j] = now
				break
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		return nil, 0, fmt.Errorf("zklock -v run: %v: %s", err, strings.Join(lines, " | "))
	}
	total := float64(time.Since(start)) / 1e6
	marks[len(marks)-1] = total
	return marks, total, nil
}

// ---------------------------------------------------------------- queue

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
	// Every waiter has joined and set its one watch, and nothing is in
	// flight.
	if _, err := waitMntr(ctx, addr, 2*time.Minute, fmt.Sprintf("%d queued waiters", n), func(m map[string]int64) bool {
		return m["zk_ephemerals_count"] == int64(n+1) && m["zk_watch_count"] == int64(n) && m["zk_outstanding_requests"] == 0
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
