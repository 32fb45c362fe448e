package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Target is one goal the report checks the numbers against.
type Target struct {
	What     string
	Want     string
	Got      string
	Met      bool
	Measured bool // false: a side of the comparison was not measured
}

// find returns the first element of xs that ok accepts, or nil.
func find[T any](xs []T, ok func(*T) bool) *T {
	for i := range xs {
		if ok(&xs[i]) {
			return &xs[i]
		}
	}
	return nil
}

func (r *Results) tool(key string) *ToolInfo {
	return find(r.Tools, func(t *ToolInfo) bool { return t.Key == key })
}

func (r *Results) toolName(key string) string {
	if t := r.tool(key); t != nil {
		return t.Name
	}
	return key
}

func (r *Results) latency(key string) *LatencyResult {
	return find(r.Uncontended, func(l *LatencyResult) bool { return l.Tool == key && l.Dist.N > 0 })
}

func (r *Results) throughput(key string, loops int) *ThroughputResult {
	return find(r.Contended, func(c *ThroughputResult) bool {
		return c.Tool == key && c.Loops == loops && c.Skipped == "" && c.Acquisitions > 0
	})
}

func findHandoff(list []HandoffResult, key string) *HandoffResult {
	return find(list, func(h *HandoffResult) bool { return h.Tool == key && h.Dist.N > 0 })
}

func (r *Results) memory(key string) *MemoryResult {
	return find(r.Memory, func(m *MemoryResult) bool { return m.Tool == key && m.RSSKiB > 0 })
}

// targets checks the goals zklock is held to.
func (r *Results) targets() []Target {
	var out []Target
	zl := r.latency("zklock")
	for _, p := range []struct {
		key   string
		ratio float64
	}{{"etcd", 0.6}, {"kazoo", 0.2}} {
		t := Target{What: fmt.Sprintf("uncontended `run -- true`, median, vs %s", r.toolName(p.key)),
			Want: fmt.Sprintf("≤ %.1f× %s", p.ratio, r.toolName(p.key))}
		if pl := r.latency(p.key); zl != nil && pl != nil {
			ratio := zl.Dist.P50 / pl.Dist.P50
			t.Measured = true
			t.Met = ratio <= p.ratio
			t.Got = fmt.Sprintf("%.2f× (%.2f ms vs %.2f ms)", ratio, zl.Dist.P50, pl.Dist.P50)
		} else {
			t.Got = "not measured"
		}
		out = append(out, t)
	}
	for _, loops := range []int{10, 50} {
		t := Target{What: fmt.Sprintf("contended throughput, %d loops", loops), Want: "≥ etcdctl lock"}
		z, e := r.throughput("zklock", loops), r.throughput("etcd", loops)
		if z != nil && e != nil {
			t.Measured = true
			t.Met = z.PerSecond >= e.PerSecond
			t.Got = fmt.Sprintf("%.2f× (%.1f/s vs %.1f/s)", z.PerSecond/e.PerSecond, z.PerSecond, e.PerSecond)
		} else {
			t.Got = "not measured"
		}
		out = append(out, t)
	}
	for _, hs := range []struct {
		what string
		list []HandoffResult
	}{{"one waiter", r.HandoffPair}, {"a queue of waiters", r.Handoff}} {
		t := Target{What: "handoff latency p50 (loopback), " + hs.what, Want: "≤ 2 ms"}
		if h := findHandoff(hs.list, "zklock"); h != nil {
			t.Measured = true
			t.Met = h.Dist.P50 <= 2
			t.Got = fmt.Sprintf("%.2f ms (p99 %.2f ms)", h.Dist.P50, h.Dist.P99)
			if f := r.HandoffFloor; f != nil {
				t.Got += fmt.Sprintf("; the probe alone: %.2f ms", f.P50)
			}
		} else {
			t.Got = "not measured"
		}
		out = append(out, t)
	}
	t := Target{What: "resident memory of a waiting zklock", Want: "≤ 12 MiB"}
	if m := r.memory("zklock"); m != nil {
		t.Measured = true
		t.Met = float64(m.RSSKiB) <= 12*1024
		t.Got = fmt.Sprintf("%.1f MiB", float64(m.RSSKiB)/1024)
	} else {
		t.Got = "not measured"
	}
	out = append(out, t)
	t = Target{What: "watch notifications per handoff, any queue length", Want: "exactly 1"}
	var got []string
	ok, any := true, false
	for _, q := range r.Queue {
		if q.Error != "" || q.Deltas == nil {
			ok = false
			got = append(got, fmt.Sprintf("%d: failed", q.Waiters))
			continue
		}
		any = true
		sum, cnt := q.Deltas["zk_sum_node_deleted_watch_count"], q.Deltas["zk_cnt_node_deleted_watch_count"]
		others := q.Deltas["zk_sum_node_children_watch_count"] + q.Deltas["zk_sum_node_changed_watch_count"] + q.Deltas["zk_sum_node_created_watch_count"]
		if sum != int64(q.Handoffs) || cnt != int64(q.Handoffs) || others != 0 {
			ok = false
		}
		got = append(got, fmt.Sprintf("%d waiters: %s", q.Waiters, trimFloat(float64(sum+others)/float64(q.Handoffs))))
	}
	t.Measured = any
	t.Met = any && ok
	t.Got = strings.Join(got, "; ")
	if !any {
		t.Got = "not measured"
	}
	out = append(out, t)
	return out
}

func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func metWord(t Target) string {
	switch {
	case !t.Measured:
		return "not measured"
	case t.Met:
		return "**met**"
	default:
		return "**not met**"
	}
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// render writes the plots into plotDir and the Markdown report to md.
func render(r *Results, md, plotDir string) error {
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		return err
	}
	plots, err := renderPlots(r, plotDir)
	if err != nil {
		return err
	}
	if md == "" {
		return nil
	}
	rel := func(p string) string {
		abs, _ := filepath.Abs(p)
		mdAbs, _ := filepath.Abs(filepath.Dir(md))
		if x, err := filepath.Rel(mdAbs, abs); err == nil {
			return filepath.ToSlash(x)
		}
		return p
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("# zklock benchmarks\n\n")
	w("<!-- Generated by internal/bench (scripts/bench.sh) from %s. Do not edit by hand: rerun the script. -->\n\n", rel(filepath.Join(plotDir, "results.json")))
	if r.Config.Quick {
		w("> **Quick smoke run** (`--quick`): small counts, numbers not meant for comparison.\n\n")
	}
	w("zklock against its peers, all on one machine over loopback, in a single run of `%s` on %s (%s). ",
		r.Repro, r.Started.Format("2006-01-02 15:04 UTC"), fmtDuration(r.Finished.Sub(r.Started).Seconds()))
	w("Each peer does the same job: run a command under a named lock, then release it.\n\n")
	if busy := max(load1(r.Machine.LoadStart), load1(r.Machine.LoadEnd)); r.Machine.Cores > 0 && busy > 0.5*float64(r.Machine.Cores) {
		w("> The machine was not idle during the run (load average %s on %d cores at the start, %s at the end): other work competed for the CPU, so absolute numbers are pessimistic. Tools were interleaved (round-robin runs, loop counts and rounds outside the tool loop) so that load changes hit every tool alike.\n\n",
			r.Machine.LoadStart, r.Machine.Cores, r.Machine.LoadEnd)
	}

	w("| tool | what runs |\n|---|---|\n")
	for _, t := range r.toolsInOrder() {
		desc := "`" + strings.Join(shortArgv(t.Argv), " ") + "`"
		switch {
		case !t.Available:
			desc = "not measured: " + t.Note
		case t.Note != "":
			desc += " — " + t.Note
		}
		w("| %s | %s |\n", t.Name, desc)
	}
	w("\n")

	w("## Targets\n\n| target | wanted | measured | |\n|---|---|---|---|\n")
	for _, t := range r.targets() {
		w("| %s | %s | %s | %s |\n", t.What, t.Want, t.Got, metWord(t))
	}
	w("\n")
	if len(r.Notes) > 0 {
		w("Notes from this run:\n\n")
		for _, n := range r.Notes {
			w("- %s\n", n)
		}
		w("\n")
	}

	// 1. Uncontended.
	w("## 1. Uncontended latency\n\n")
	w("Wall time of one whole process, `TOOL … -- true`, from fork to exit as the driver sees it, with nobody else on the lock. Each tool uses its own lock name; the runs are interleaved round-robin across tools, after %d uncounted warm-up runs each.\n\n", r.Config.UncontendedWarmup)
	if p, ok := plots["uncontended"]; ok {
		w("![Uncontended latency](%s)\n\n", rel(p))
	}
	w("| tool | runs | median ms | p90 ms | mean ms | min ms | max ms | zklock ÷ tool (median) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	zl := r.latency("zklock")
	for _, l := range r.Uncontended {
		if l.Dist.N == 0 {
			w("| %s | 0 | – | – | – | – | – | failed: %s |\n", r.toolName(l.Tool), l.Error)
			continue
		}
		ratio := "–"
		if zl != nil && l.Tool != "zklock" {
			ratio = fmt.Sprintf("%.2f×", zl.Dist.P50/l.Dist.P50)
		}
		w("| %s | %d | %s | %s | %s | %s | %s | %s |\n", r.toolName(l.Tool), l.Dist.N, ms(l.Dist.P50), ms(l.Dist.P90),
			ms(l.Dist.Mean), ms(l.Dist.Min), ms(l.Dist.Max), ratio)
	}
	w("\n")

	// 2. Contended.
	w("## 2. Contended throughput\n\n")
	w("*N* loops run the tool with `true` on **one** lock, each starting the next run as soon as its last one exits. Counted: runs that ended within a %s window after %s of warm-up. Every acquisition is a new process, so this measures process start + connect + queue + handoff together, on %d cores shared with the server.\n\n",
		fmtDuration(r.Config.ContendedWindow.Seconds()), fmtDuration(r.Config.ContendedWarmup.Seconds()), r.Machine.Cores)
	if p, ok := plots["throughput"]; ok {
		w("![Contended throughput](%s)\n\n", rel(p))
	}
	loops := r.Config.ContendedLoops
	w("| tool |")
	for _, l := range loops {
		w(" %d loop%s (acq/s) |", l, plural(l))
	}
	w("\n|---|")
	for range loops {
		w("---:|")
	}
	w("\n")
	for _, t := range r.Tools {
		if !t.Available || !r.inContended(t.Key) {
			continue
		}
		w("| %s |", t.Name)
		for _, l := range loops {
			w(" %s |", throughputCell(r, t.Key, l))
		}
		w("\n")
	}
	for _, t := range r.Tools {
		if !t.Available || t.Key == "zklock" || !r.inContended(t.Key) {
			continue
		}
		w("| *zklock ÷ %s* |", t.Name)
		for _, l := range loops {
			z, p := r.throughput("zklock", l), r.throughput(t.Key, l)
			if z != nil && p != nil {
				w(" %.2f× |", z.PerSecond/p.PerSecond)
			} else {
				w(" – |")
			}
		}
		w("\n")
	}
	w("\n")
	var skipped []string
	for _, c := range r.Contended {
		if c.Skipped != "" {
			skipped = append(skipped, fmt.Sprintf("%s at %d loops: %s", r.toolName(c.Tool), c.Loops, c.Skipped))
		}
	}
	if len(skipped) > 0 {
		w("Not measured (–):\n\n")
		for _, s := range skipped {
			w("- %s\n", s)
		}
		w("\n")
	}

	// 3. Handoff.
	w("## 3. Handoff latency\n\n")
	probe := r.probe()
	w("A holder runs `sh -c 'read _ < FIFO; exec %s'`; *W* waiters queue behind it, each running `%s`. Once all have joined the queue (counted on the server: znode children, etcd keys, `/proc/locks`) and settled, the driver opens the FIFO. Every command prints the time it ran, so consecutive stamps are the time from one holder's command exit to the next holder's command start: release, wake-up, re-check, fork/exec. ", probe, probe)
	if probe == "stamp" {
		w("`stamp` ([internal/bench/stamp/stamp.c](../internal/bench/stamp/stamp.c), linked statically) prints the time in nanoseconds, as `date +%%s%%N` does, without date's dynamic linking and locale set-up, so less of each interval is the probe's own start-up. ")
	}
	w("The probe's exit and start-up still cost the floor below, which is included in every tool's number.\n\n")
	if p, ok := plots["handoff"]; ok {
		w("![Handoff latency](%s)\n\n", rel(p))
	}
	w("Two queues are measured. With **one waiter** behind the holder, the usual case for a cron job or a CI stage, a zklock waiter has watched the holder's own node, so its deletion alone means the lock is free. In a **queue of waiters**, each waiter watched the one ahead of it, which may have given up rather than held the lock, so the woken waiter lists the queue once more before it runs: one more read from the server per handoff. etcdctl lock re-reads after every wake-up.\n\n")
	w("| tool | waiters × rounds | handoffs | p50 ms | p90 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|---:|---:|\n")
	if f := r.HandoffFloor; f != nil {
		w("| *floor: `%s` twice, no lock* | – | %d | %s | %s | %s | %s |\n", probe, f.N, ms(f.P50), ms(f.P90), ms(f.P99), ms(f.Max))
	}
	if sp := r.ServerPart; sp != nil {
		for _, d := range []struct {
			what string
			dist Dist
		}{{"ZooKeeper alone: a session's close to another session's watch event", sp.CloseToWatch},
			{fmt.Sprintf("ZooKeeper alone: getChildren of a %d-node queue", sp.QueueLen), sp.ListQueue}} {
			w("| *%s* | – | %d | %s | %s | %s | %s |\n", d.what, d.dist.N, ms(d.dist.P50), ms(d.dist.P90), ms(d.dist.P99), ms(d.dist.Max))
		}
	}
	for _, h := range r.allHandoffs() {
		if h.Dist.N == 0 {
			w("| %s | %d | 0 | – | – | – | failed: %s |\n", r.toolName(h.Tool), h.Waiters, h.Error)
			continue
		}
		w("| %s | %d × %d | %d | %s | %s | %s | %s |\n", r.toolName(h.Tool), h.Waiters, h.Rounds, h.Dist.N,
			ms(h.Dist.P50), ms(h.Dist.P90), ms(h.Dist.P99), ms(h.Dist.Max))
	}
	w("\n")
	r.writeHandoffShares(w)

	// 4. Queue.
	w("## 4. A long zklock queue: drain time and server work per release\n\n")
	w("A zklock holder (the FIFO script above) and *N* zklock waiters (`%s`) on one lock, `/benchqN/lock`. The driver waits until the server reports N+1 ephemeral nodes, exactly N watches and no outstanding requests, takes `mntr`, releases the holder, waits for every process to exit and every session to close, and takes `mntr` again. The table shows the differences. A release is any contender's delete (N+1 of them); a handoff is a release with a waiter behind it (N).\n\n", r.probe())
	if p, ok := plots["queue"]; ok {
		w("![Server work per release](%s)\n\n", rel(p))
	}
	w("| waiters | drain ms | ms / handoff | handoff p50 / p99 ms | watch notifications | … per handoff | packets in / release | packets out / release | read requests / release | … of them pings | write requests / release | lock znodes changed / release | waiter VmRSS median / max MiB (with children) |\n")
	w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, q := range r.Queue {
		if q.Error != "" || q.Deltas == nil {
			w("| %d | failed: %s |||||||||||\n", q.Waiters, q.Error)
			continue
		}
		d := q.Deltas
		rel := float64(q.Releases)
		notes := d["zk_sum_node_deleted_watch_count"] + d["zk_sum_node_children_watch_count"] + d["zk_sum_node_changed_watch_count"] + d["zk_sum_node_created_watch_count"]
		w("| %d | %s | %s | %s / %s | %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f / %.1f |\n",
			q.Waiters, ms(q.DrainMS), ms(q.DrainMS/float64(q.Handoffs)), ms(q.Handoff.P50), ms(q.Handoff.P99),
			notes, trimFloat(float64(notes)/float64(q.Handoffs)),
			float64(d["zk_packets_received"])/rel, float64(d["zk_packets_sent"])/rel,
			float64(d["zk_cnt_readlatency"])/rel, float64(d["pings"])/rel,
			float64(d["zk_cnt_updatelatency"])/rel, float64(d["ns_writes"])/rel,
			float64(q.WaiterRSSMedianKiB)/1024, float64(q.WaiterRSSMaxKiB)/1024)
	}
	w("\n")
	w("What each column counts (ZooKeeper %s `mntr`, differences over the drain):\n\n", shortVersion(r.Machine.Versions["zookeeper"]))
	w("- **watch notifications**: `zk_sum_node_deleted_watch_count` plus the same sums for `children`, `changed` and `created` watches. Each time an event fires one or more watches (`WatchManager.triggerWatch`), the server adds the number of watchers it notified to the summary of that event type; `_cnt` counts such events. Herd-free means one event per handoff (`zk_cnt_node_deleted_watch_count` = N) that notifies exactly one watcher (`…_sum` = N), and no other watch fires.\n")
	w("- **packets in / out**: `zk_packets_received` / `zk_packets_sent`, all client traffic of the server: requests and pings in; responses and watch events out. Four-letter commands such as `mntr` are not counted.\n")
	w("- **read requests**: `zk_cnt_readlatency`, every read-only request the server answered: `getChildren`, `getData`, `exists`, and go-zookeeper's pings. **pings** are these minus the reads on the lock path (`zk_cnt_<ns>_read_per_namespace`, ZooKeeper 3.7+ keeps per-first-path-component counts). Idle waiters ping every third of the session timeout, so pings grow with how long the waiters wait, not with the number of releases.\n")
	w("- **write requests**: `zk_cnt_updatelatency`, every request that changes state: `create`, `delete`, `createSession`, `closeSession`.\n")
	w("- **lock znodes changed**: `zk_cnt_<ns>_write_per_namespace`, znodes created or deleted under the lock's top-level node, including the ephemeral nodes that a `closeSession` deletes.\n\n")

	// 5. Memory.
	w("## 5. Memory of a waiting process\n\n")
	w("A holder keeps the lock (it blocks on a FIFO); one more process queues behind it with `true`. Once it is queued and has settled, the driver reads `VmRSS` (and `VmHWM`, the peak) from `/proc/PID/status`, summed over the waiting process and any children.\n\n")
	w("| tool | VmRSS MiB | VmHWM MiB | processes | zklock ÷ tool |\n|---|---:|---:|---:|---:|\n")
	zm := r.memory("zklock")
	for _, m := range r.Memory {
		if m.RSSKiB == 0 {
			w("| %s | – | – | – | failed: %s |\n", r.toolName(m.Tool), m.Error)
			continue
		}
		ratio := "–"
		if zm != nil && m.Tool != "zklock" {
			ratio = fmt.Sprintf("%.2f×", float64(zm.RSSKiB)/float64(m.RSSKiB))
		}
		w("| %s | %.1f | %.1f | %d | %s |\n", r.toolName(m.Tool), float64(m.RSSKiB)/1024, float64(m.HWMKiB)/1024, m.Processes, ratio)
	}
	w("\n")

	// Profile.
	if p := r.Profile; p != nil && len(p.Phases) > 0 {
		w("## Where an uncontended zklock run spends its time\n\n")
		w("Medians of %d runs of `zklock -v run -- true`, timed by when each `-v` progress line reached the driver (so each mark is a little late, by a pipe write and read). For scale: fork+exec+wait of `/bin/true` takes %s ms, and `zklock version`, which starts the Go runtime and the CLI but touches no network, takes %s ms.\n\n",
			p.Runs, ms(p.TrueMS), ms(p.VersionMS))
		w("| mark | at ms | + ms | spent on |\n|---|---:|---:|---|\n")
		for _, ph := range p.Phases {
			if ph.Seen == 0 {
				w("| %s | – | – | %s (line not seen) |\n", ph.Mark, ph.Meaning)
				continue
			}
			w("| %s | %s | %s | %s |\n", ph.Mark, ms(ph.AtMS), ms(ph.DeltaMS), ph.Meaning)
		}
		w("| **total** | %s | | whole process, with `-v` |\n\n", ms(p.TotalMS))
		w("%s\n\n", profileSummary(p))
	}

	// Micro-benchmarks.
	if mb := r.Micro; mb != "" {
		w("## Micro-benchmarks\n\n")
		w("The lock package's hot paths without a server (`lock/bench_test.go`): parsing and ordering a queue's children (what a waiter does on every wake-up), and decoding a contender's data (what `list`, `holders` and a busy `tryrun` do per node). `go test -run '^$' -bench . -benchmem ./lock`:\n\n")
		w("```\n%s```\n\n", filterBench(mb))
	}

	// Machine.
	w("## Machine\n\n| | |\n|---|---|\n")
	w("| date | %s |\n", r.Started.Format("2006-01-02 15:04:05 UTC"))
	w("| CPU | %s, %d cores |\n| memory | %s |\n| kernel | %s |\n| OS | %s |\n", r.Machine.CPU, r.Machine.Cores, r.Machine.MemTotal, r.Machine.Kernel, r.Machine.OS)
	if r.Machine.LoadStart != "" {
		w("| load average (1, 5, 15 min) | %s at the start, %s at the end |\n", r.Machine.LoadStart, r.Machine.LoadEnd)
	}
	keys := make([]string, 0, len(r.Machine.Versions))
	for k := range r.Machine.Versions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w("| %s | %s |\n", k, strings.ReplaceAll(r.Machine.Versions[k], "|", "/"))
	}
	w("\n")

	// Method and caveats.
	w("## Set-up and caveats\n\n")
	w("- One standalone ZooKeeper (started with `internal/zktest`: 2 s tick, default JIT, 1 GiB heap, fsync on) and one single-member etcd, both listening on 127.0.0.1 only, both keeping their data on tmpfs (`/dev/shm`). An fsync there costs next to nothing, so neither server measures a disk; on real disks every write (zklock's create and delete, etcd's put and delete) pays an fsync, on both sides alike.\n")
	w("- Servers, clients and the driver share the same %d cores. Under contention the machine is CPU-bound by process starts, which is part of what a per-process lock tool costs.\n", r.Machine.Cores)
	if b := r.Machine.Versions["zklock build"]; b != "" {
		w("- zklock is built as a release is: %s. ", b)
		if r.latency("zklock-cgo") != nil {
			w("The *cgo build* row of the uncontended test is a plain `go build`, which links libc dynamically and starts more slowly.")
		}
		w("\n")
	}
	w("- Every tool is a fresh process per acquisition, as in cron or CI use. The Kazoo and Curator runners pay a Python or JVM start each time; their libraries are much faster once running, which this benchmark does not measure.\n")
	w("- Handoff stamps come from `%s`, whose own exit and start-up (the floor above) are part of each interval for every tool.\n", r.probe())
	w("- zklock's session timeout is its default (10 s); etcdctl's lease TTL its default (10 s); the runners' session timeout their default (10 s).\n\n")

	w("## Reproduce\n\n```sh\n%s\n```\n\n", r.Repro)
	w("`scripts/bench.sh --quick` is a smoke run that writes to a temporary directory instead of `docs/`. The counts come from these environment variables (the values used for this run are in `results.json`, under `config`):\n\n")
	w("| variable | meaning |\n|---|---|\n")
	for _, e := range envDoc {
		w("| `%s` | %s |\n", e.Name, e.Meaning)
	}
	w("\n`go run ./internal/bench/cmd/zklock-bench report -in %s -md %s` re-renders this page and its plots from the stored results without measuring again.\n",
		rel(filepath.Join(plotDir, "results.json")), filepath.Base(md))

	return os.WriteFile(md, []byte(b.String()), 0o644)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func fmtDuration(sec float64) string {
	switch {
	case sec >= 120:
		return fmt.Sprintf("%.1f min", sec/60)
	case sec == math.Trunc(sec):
		return fmt.Sprintf("%.0f s", sec)
	default:
		return fmt.Sprintf("%.1f s", sec)
	}
}

func throughputCell(r *Results, key string, loops int) string {
	for _, c := range r.Contended {
		if c.Tool != key || c.Loops != loops {
			continue
		}
		switch {
		case c.Skipped != "":
			return "–"
		case c.Acquisitions == 0:
			return "failed"
		}
		s := fmt.Sprintf("%.1f", c.PerSecond)
		if c.Errors > 0 {
			s += fmt.Sprintf(" (%d errors)", c.Errors)
		}
		return s
	}
	return "–"
}

// shortArgv drops the directories of absolute paths and long classpaths so
// the table stays readable.
func shortArgv(a []string) []string {
	out := make([]string, 0, len(a))
	for i, s := range a {
		switch {
		case i > 0 && a[i-1] == "-cp":
			out = append(out, "…")
		case strings.HasPrefix(s, "/") && !strings.Contains(s, " ") && i == 0:
			out = append(out, filepath.Base(s))
		case strings.HasPrefix(s, "/tmp/") || strings.HasPrefix(s, "/dev/shm/"):
			out = append(out, filepath.Base(s))
		case strings.HasPrefix(s, "127.0.0.1:"):
			out = append(out, "127.0.0.1:PORT")
		default:
			out = append(out, s)
		}
	}
	return out
}

// filterBench keeps the benchmark lines and the header of go test output.
func filterBench(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "goos:") || strings.HasPrefix(l, "goarch:") ||
			strings.HasPrefix(l, "cpu:") || strings.HasPrefix(l, "pkg:") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// profileSummary puts the profile into a few sentences.
func profileSummary(p *Profile) string {
	get := func(mark string) *ProfilePhase {
		for i := range p.Phases {
			if p.Phases[i].Mark == mark && p.Phases[i].Seen > 0 {
				return &p.Phases[i]
			}
		}
		return nil
	}
	var parts []string
	if p.TotalMS > 0 && p.VersionMS > 0 {
		parts = append(parts, fmt.Sprintf("Starting the process costs about %s ms (`zklock version`), %.0f%% of the run.", ms(p.VersionMS), 100*p.VersionMS/p.TotalMS))
	}
	net := 0.0
	for _, m := range []string{"session", "dialed", "acquired", "command"} {
		if ph := get(m); ph != nil {
			net += ph.DeltaMS
		}
	}
	if net > 0 {
		parts = append(parts, fmt.Sprintf("From the open TCP connection to the moment the command starts, the ZooKeeper round trips and the work between them take %s ms together.", ms(net)))
	}
	if p.PacketsIn > 0 {
		parts = append(parts, fmt.Sprintf("Per run the server counted %.1f packets in and %.1f out: %.1f write requests (session creation and closing included), %.1f read requests (%.1f of them on the lock path), and %.1f znodes created or deleted on the lock path.",
			p.PacketsIn, p.PacketsOut, p.WriteRequests, p.ReadRequests, p.LockReads, p.LockWrites))
	}
	if ph := get("released"); ph != nil {
		parts = append(parts, fmt.Sprintf("Running `true` and releasing the lock take %s ms.", ms(ph.DeltaMS)))
	}
	if ph := get("exit"); ph != nil {
		parts = append(parts, fmt.Sprintf("What is left after the release line, up to the process's exit, takes %s ms.", ms(ph.DeltaMS)))
	}
	return strings.Join(parts, " ")
}

// distBar is a bar for one distribution: its p50, with a whisker at the
// upper percentile named, or "failed" when nothing was measured.
func distBar(key, label string, d Dist, upperName string, upper float64) hbar {
	row := hbar{Key: key, Label: label, HighlightRow: key == "zklock"}
	if d.N == 0 {
		row.Unavailable = "failed"
		return row
	}
	row.Value, row.Whisker = d.P50, upper
	row.Annotation = fmt.Sprintf("%s ms (%s %s)", ms(d.P50), upperName, ms(upper))
	return row
}

// allHandoffs lists the one-waiter handoffs, then the queue's.
func (r *Results) allHandoffs() []HandoffResult {
	return append(append([]HandoffResult(nil), r.HandoffPair...), r.Handoff...)
}

// renderPlots writes the SVG plots and returns their paths by name.
func renderPlots(r *Results, dir string) (map[string]string, error) {
	out := map[string]string{}
	var rows []hbar
	for _, l := range r.Uncontended {
		rows = append(rows, distBar(l.Tool, r.toolName(l.Tool), l.Dist, "p90", l.Dist.P90))
	}
	if len(rows) > 0 {
		p := filepath.Join(dir, "uncontended.svg")
		if err := hbarChart(p, "Uncontended run -- true, whole process: median", "milliseconds", "p90", rows); err != nil {
			return nil, err
		}
		out["uncontended"] = p
	}

	var groups []string
	for _, l := range r.Config.ContendedLoops {
		groups = append(groups, fmt.Sprintf("%d loop%s", l, plural(l)))
	}
	var series []gbarSeries
	for _, t := range r.Tools {
		if !t.Available || !r.inContended(t.Key) {
			continue
		}
		se := gbarSeries{Key: t.Key, Label: t.Name}
		for _, l := range r.Config.ContendedLoops {
			v := math.NaN()
			if c := r.throughput(t.Key, l); c != nil {
				v = c.PerSecond
			}
			se.Values = append(se.Values, v)
		}
		series = append(series, se)
	}
	if len(r.Contended) > 0 {
		p := filepath.Join(dir, "throughput.svg")
		if err := groupedBarChart(p, "Contended throughput: acquisitions per second on one lock", "acquisitions / s", groups, series); err != nil {
			return nil, err
		}
		out["throughput"] = p
	}

	rows = nil
	if f := r.HandoffFloor; f != nil {
		probe := strings.Fields(r.probe())[0]
		rows = append(rows, distBar("floor", "floor ("+probe+", "+probe+")", *f, "p99", f.P99))
	}
	for _, h := range r.allHandoffs() {
		queue := "1 waiter"
		if h.Waiters != 1 {
			queue = fmt.Sprintf("%d queued", h.Waiters)
		}
		rows = append(rows, distBar(h.Tool, r.toolName(h.Tool)+", "+queue, h.Dist, "p99", h.Dist.P99))
	}
	if len(r.Handoff)+len(r.HandoffPair) > 0 {
		p := filepath.Join(dir, "handoff.svg")
		if err := hbarChart(p, "Handoff: holder's command exit to next waiter's command start", "milliseconds", "p99", rows); err != nil {
			return nil, err
		}
		out["handoff"] = p
	}

	var xs []string
	notif := lineSeries{Label: "watch notifications / handoff", Color: "#1f6fb4"}
	pin := lineSeries{Label: "packets in / release", Color: "#e8710a"}
	req := lineSeries{Label: "requests / release", Color: "#2e9e44", Dash: "6 4"}
	pout := lineSeries{Label: "packets out / release", Color: "#c9302c"}
	for _, q := range r.Queue {
		xs = append(xs, strconv.Itoa(q.Waiters))
		if q.Deltas == nil || q.Error != "" {
			for _, s := range []*lineSeries{&notif, &pin, &req, &pout} {
				s.Values = append(s.Values, math.NaN())
			}
			continue
		}
		d := q.Deltas
		rel := float64(q.Releases)
		notes := d["zk_sum_node_deleted_watch_count"] + d["zk_sum_node_children_watch_count"] + d["zk_sum_node_changed_watch_count"] + d["zk_sum_node_created_watch_count"]
		notif.Values = append(notif.Values, float64(notes)/float64(q.Handoffs))
		pin.Values = append(pin.Values, float64(d["zk_packets_received"])/rel)
		req.Values = append(req.Values, float64(d["zk_cnt_readlatency"]+d["zk_cnt_updatelatency"])/rel)
		pout.Values = append(pout.Values, float64(d["zk_packets_sent"])/rel)
	}
	if len(xs) > 0 {
		p := filepath.Join(dir, "queue.svg")
		if err := lineChart(p, "zklock queue: ZooKeeper work per release vs queue length", "waiters queued behind the holder",
			"per release (mntr deltas)", xs, []lineSeries{notif, pin, req, pout}); err != nil {
			return nil, err
		}
		out["queue"] = p
	}
	return out, nil
}

// shortVersion keeps the leading version number of a version string such
// as ZooKeeper's "3.8.0-${mvngit.commit.id}, built on …".
func shortVersion(v string) string {
	if i := strings.IndexAny(v, "-, "); i > 0 {
		return v[:i]
	}
	return v
}

// inContended reports whether the contended test has cells for the tool.
func (r *Results) inContended(key string) bool {
	for _, c := range r.Contended {
		if c.Tool == key {
			return true
		}
	}
	return false
}

// load1 is the one-minute figure of a /proc/loadavg excerpt.
func load1(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// toolsInOrder lists zklock and its cgo build first, then the peers.
func (r *Results) toolsInOrder() []ToolInfo {
	rank := map[string]int{"zklock": 0, "zklock-cgo": 1}
	out := append([]ToolInfo(nil), r.Tools...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, ok := rank[out[i].Key]
		if !ok {
			ri = 2
		}
		rj, ok := rank[out[j].Key]
		if !ok {
			rj = 2
		}
		return ri < rj
	})
	return out
}

// probe is the handoff probe's command line; results from before it was
// recorded used date.
func (r *Results) probe() string {
	if r.HandoffProbe == "" {
		return "date +%s%N"
	}
	return r.HandoffProbe
}

// writeHandoffShares splits zklock's handoff into the probe, ZooKeeper and
// zklock's own processes. The ZooKeeper rows are timed from the driver's
// sessions (measureServerPart), without starting any process.
func (r *Results) writeHandoffShares(w func(string, ...any)) {
	sp, f := r.ServerPart, r.HandoffFloor
	pair, queue := findHandoff(r.HandoffPair, "zklock"), findHandoff(r.Handoff, "zklock")
	if sp == nil || f == nil || pair == nil {
		return
	}
	rest := "nothing measurable"
	if d := pair.Dist.P50 - sp.CloseToWatch.P50 - f.P50; d > 0.005 {
		rest = "about " + ms(d) + " ms"
	}
	w("Where a zklock handoff goes (p50s, so the parts only roughly add up): ZooKeeper takes %s ms from the holder's session close to the waiter's watch event, and the probe's own exit and start take %s ms. Of the %s ms to the one waiter, that leaves %s for zklock's two processes: the holder noticing its command's exit and sending the close, the waiter waking up on the event and starting its command.",
		ms(sp.CloseToWatch.P50), ms(f.P50), ms(pair.Dist.P50), rest)
	if queue != nil {
		w(" In a queue the woken waiter also lists the queue (%s ms on an idle server), which the rule of one watch notification per release makes necessary: nothing else tells a waiter whether the node it watched held the lock or gave up.", ms(sp.ListQueue.P50))
	}
	w("\n\n")
}
