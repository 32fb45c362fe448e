package bench

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

//go:embed report.md.tmpl
var reportText string

// reportTmpl is the Markdown report. Its numbers are formatted by the
// functions below, so that the template holds the page's wording and
// layout and nothing else.
var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms":             ms,
	"f2":             func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"mib":            func(kib int64) string { return fmt.Sprintf("%.1f", float64(kib)/1024) },
	"mib2":           func(kib int64) string { return fmt.Sprintf("%.2f", float64(kib)/1024) },
	"div":            func(a, b any) float64 { return toFloat(a) / toFloat(b) },
	"trimFloat":      trimFloat,
	"plural":         plural,
	"seconds":        fmtDuration,
	"shortVersion":   shortVersion,
	"metWord":        metWord,
	"profileSummary": profileSummary,
	"notifications":  notifications,
	"perRelease":     perRelease,
	"listRatio":      listRatio,
	"cell":           func(s string) string { return strings.ReplaceAll(s, "|", "/") },
	"stormWindow":    func() string { return stormWindow },
	// Set per page by render: they look tools up in its Results.
	"name":            func(string) string { return "" },
	"latencyRatio":    func(LatencyResult) string { return "" },
	"memoryRatio":     func(MemoryResult) string { return "" },
	"throughputCell":  func(string, int) string { return "" },
	"throughputRatio": func(string, int) string { return "" },
	"cpuCell":         func(string, int) string { return "" },
}).Parse(reportText))

// page is what the report template sees: the results, and what is derived
// from them for the page.
type page struct {
	*Results
	ResultsPath string            // results.json, relative to the page
	PageName    string            // the page's own file name
	Plots       map[string]string // plot name → path relative to the page
	Elapsed     string
	// Busy says that the load average showed other work on the machine.
	Busy           bool
	ToolRows       []toolRow
	Targets        []Target
	ContendedTools []ToolInfo // available tools with contended cells
	Skipped        []string   // contended cells not measured, and why
	Probe          string
	AllHandoffs    []HandoffResult
	HandoffShares  string
	CPUShares      string
	MicroText      string
	CgoMeasured    bool // the cgo build's uncontended latency is on the page
	EnvDoc         []envVar
	// Watchdog is the watchdog's change of design, measured by hand.
	Watchdog *watchdogHistory
}

// toolRow is a tool and what runs for it, in the list of tools.
type toolRow struct{ Name, What string }

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
	p := newPage(r)
	p.ResultsPath = rel(filepath.Join(plotDir, "results.json"))
	p.PageName = filepath.Base(md)
	for k, v := range plots {
		p.Plots[k] = rel(v)
	}
	var b bytes.Buffer
	if err := p.execute(&b); err != nil {
		return err
	}
	return os.WriteFile(md, b.Bytes(), 0o644)
}

// newPage derives what the template needs from r, without paths.
func newPage(r *Results) *page {
	p := &page{Results: r, Plots: map[string]string{}, Probe: r.probe(), AllHandoffs: r.allHandoffs(),
		Targets: r.targets(), Elapsed: fmtDuration(r.Finished.Sub(r.Started).Seconds()),
		HandoffShares: r.handoffShares(), CPUShares: r.cpuShares(), MicroText: filterBench(r.Micro),
		CgoMeasured: r.latency("zklock-cgo") != nil, EnvDoc: envDoc, Watchdog: watchdogPast}
	busy := max(load1(r.Machine.LoadStart), load1(r.Machine.LoadEnd))
	p.Busy = r.Machine.Cores > 0 && busy > 0.5*float64(r.Machine.Cores)
	for _, t := range r.toolsInOrder() {
		what := "`" + strings.Join(shortArgv(t.Argv), " ") + "`"
		switch {
		case !t.Available:
			what = "not measured: " + t.Note
		case t.Note != "":
			what += " — " + t.Note
		}
		p.ToolRows = append(p.ToolRows, toolRow{Name: t.Name, What: what})
	}
	for _, t := range r.Tools {
		if t.Available && r.inContended(t.Key) {
			p.ContendedTools = append(p.ContendedTools, t)
		}
	}
	for _, c := range r.Contended {
		if c.Skipped != "" {
			p.Skipped = append(p.Skipped, fmt.Sprintf("%s at %d loops: %s", r.toolName(c.Tool), c.Loops, c.Skipped))
		}
	}
	return p
}

// execute renders the report, with the look-up functions bound to p's
// results.
func (p *page) execute(w io.Writer) error {
	r := p.Results
	t, err := reportTmpl.Clone()
	if err != nil {
		return err
	}
	zl, zm := r.latency("zklock"), r.memory("zklock")
	t.Funcs(template.FuncMap{
		"name": r.toolName,
		"latencyRatio": func(l LatencyResult) string {
			if zl == nil || l.Tool == "zklock" {
				return "–"
			}
			return fmt.Sprintf("%.2f×", zl.Dist.P50/l.Dist.P50)
		},
		"memoryRatio": func(m MemoryResult) string {
			if zm == nil || m.Tool == "zklock" {
				return "–"
			}
			return fmt.Sprintf("%.2f×", float64(zm.RSSKiB)/float64(m.RSSKiB))
		},
		"throughputCell": func(key string, loops int) string { return throughputCell(r, key, loops) },
		"cpuCell": func(key string, loops int) string {
			if c := r.throughput(key, loops); c != nil && c.CPUPerAcqMS > 0 {
				return ms(c.CPUPerAcqMS)
			}
			return "–"
		},
		"throughputRatio": func(key string, loops int) string {
			z, o := r.throughput("zklock", loops), r.throughput(key, loops)
			if z == nil || o == nil {
				return "–"
			}
			return fmt.Sprintf("%.2f×", z.PerSecond/o.PerSecond)
		},
	})
	return t.Execute(w, p)
}

// notifications is the watch notifications of a queue's drain: every
// watcher notified, of any event type.
func notifications(q QueueResult) int64 {
	d := q.Deltas
	return d["zk_sum_node_deleted_watch_count"] + d["zk_sum_node_children_watch_count"] + d["zk_sum_node_changed_watch_count"] + d["zk_sum_node_created_watch_count"]
}

// perRelease is a counter's change over a drain, per release.
func perRelease(q QueueResult, key string) float64 {
	return float64(q.Deltas[key]) / float64(q.Releases)
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	}
	panic(fmt.Sprintf("toFloat: %T", v))
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
	// The marks start at the established session; -v lines, which older
	// results were timed by, at the open TCP connection.
	from, phases := "the established session", []string{"acquired", "command"}
	if !p.Marks {
		from, phases = "the open TCP connection", []string{"session", "dialed", "acquired", "command"}
	}
	net := 0.0
	for _, m := range phases {
		if ph := get(m); ph != nil {
			net += ph.DeltaMS
		}
	}
	if net > 0 {
		parts = append(parts, fmt.Sprintf("From %s to the moment the command starts, the ZooKeeper round trips and the work between them take %s ms together.", from, ms(net)))
	}
	if p.PacketsIn > 0 {
		parts = append(parts, fmt.Sprintf("Per run the server counted %.1f packets in and %.1f out: %.1f write requests (session creation and closing included), %.1f read requests (%.1f of them on the lock path), and %.1f znodes created or deleted on the lock path.",
			p.PacketsIn, p.PacketsOut, p.WriteRequests, p.ReadRequests, p.LockReads, p.LockWrites))
	}
	if ph := get("released"); ph != nil {
		parts = append(parts, fmt.Sprintf("Running `true` and releasing the lock take %s ms.", ms(ph.DeltaMS)))
	}
	if ph := get("exit"); ph != nil {
		after := "the release line"
		if p.Marks {
			after = "the release"
		}
		parts = append(parts, fmt.Sprintf("What is left after %s, up to the process's exit, takes %s ms.", after, ms(ph.DeltaMS)))
	}
	return strings.Join(parts, " ")
}

// cpuShares says where zklock's CPU time per uncontended run goes beyond
// the minimal runner's: zklock's start, measured on its own, and the rest;
// empty when a part was not measured.
func (r *Results) cpuShares() string {
	zl, mn, p := r.latency("zklock"), r.latency("minimal"), r.Profile
	if zl == nil || mn == nil || p == nil || zl.CPU.N == 0 || mn.CPU.N == 0 {
		return ""
	}
	cost := func(what string) *Cost { return find(p.Costs, func(c *Cost) bool { return c.What == what }) }
	zv, ms0 := cost("`zklock version`"), cost("minimal runner, no arguments")
	if zv == nil || ms0 == nil {
		return ""
	}
	extra := zl.CPU.P50 - mn.CPU.P50
	start := zv.CPUMS - ms0.CPUMS
	s := fmt.Sprintf("An uncontended zklock run takes %s ms of CPU, the minimal runner %s ms: %s ms more. zklock's own start accounts for %s ms of it (the package initialisation of everything linked, the Kerberos stack's included, and the command line).",
		ms(zl.CPU.P50), ms(mn.CPU.P50), ms(extra), ms(start))
	if rest := extra - start; rest > 0 {
		s += fmt.Sprintf(" That leaves about %s ms for the run's own work beyond the minimal runner's: the keepalive, the own-node watch, the loss guard, the command's supervision and the watchdog, zklock-watchdog, a program of its own that zklock starts beside the command.", ms(rest))
	}
	return s
}

// handoffShares splits zklock's handoff into the probe, ZooKeeper and
// zklock's own processes, or is empty when a part was not measured. The
// ZooKeeper rows are timed from the driver's sessions (measureServerPart),
// without starting any process.
func (r *Results) handoffShares() string {
	sp, f := r.ServerPart, r.HandoffFloor
	pair, queue := findHandoff(r.HandoffPair, "zklock"), findHandoff(r.Handoff, "zklock")
	if sp == nil || f == nil || pair == nil {
		return ""
	}
	rest := "nothing measurable"
	if d := pair.Dist.P50 - sp.CloseToWatch.P50 - f.P50; d > 0.005 {
		rest = "about " + ms(d) + " ms"
	}
	s := fmt.Sprintf("Where a zklock handoff goes (p50s, so the parts only roughly add up): ZooKeeper takes %s ms from the holder's session close to the waiter's watch event, and the probe's own exit and start take %s ms. Of the %s ms to the one waiter, that leaves %s for zklock's two processes: the holder noticing its command's exit and sending the close, the waiter waking up on the event and starting its command.",
		ms(sp.CloseToWatch.P50), ms(f.P50), ms(pair.Dist.P50), rest)
	if queue != nil {
		s += fmt.Sprintf(" In a queue the woken waiter also lists the queue (%s ms on an idle server), which the rule of one watch notification per release makes necessary: nothing else tells a waiter whether the node it watched held the lock or gave up.", ms(sp.ListQueue.P50))
	}
	return s
}

// listRatio is zklock's time for a list over the peer's, whole processes
// and walks alone (start-up and connecting taken off); "–" without a peer.
func listRatio(l ListResult) string {
	if l.PeerMS <= 0 {
		return "–"
	}
	s := fmt.Sprintf("%.2f×", l.ZklockMS/l.PeerMS)
	if walk, peer := l.ZklockMS-l.ZklockEmptyMS, l.PeerMS-l.PeerEmptyMS; walk > 0 && peer > 0 {
		s += fmt.Sprintf(" (walk %.2f×)", walk/peer)
	}
	return s
}
