package bench

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

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

// renderPlots writes the SVG plots and returns their paths by name.
func renderPlots(r *Results, dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, plot := range []func(string, map[string]string) error{
		r.plotUncontended, r.plotThroughput, r.plotHandoff, r.plotQueue,
	} {
		if err := plot(dir, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// plotUncontended draws each tool's uncontended median and p90.
func (r *Results) plotUncontended(dir string, out map[string]string) error {
	var rows []hbar
	for _, l := range r.Uncontended {
		rows = append(rows, distBar(l.Tool, r.toolName(l.Tool), l.Dist, "p90", l.Dist.P90))
	}
	if len(rows) > 0 {
		p := filepath.Join(dir, "uncontended.svg")
		if err := hbarChart(p, "Uncontended run -- true, whole process: median", "milliseconds", "p90", rows); err != nil {
			return err
		}
		out["uncontended"] = p
	}
	return nil
}

// plotThroughput draws contended throughput by tool and loop count.
func (r *Results) plotThroughput(dir string, out map[string]string) error {
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
			return err
		}
		out["throughput"] = p
	}
	return nil
}

// plotHandoff draws the handoff's median and p99, the probe's floor first.
func (r *Results) plotHandoff(dir string, out map[string]string) error {
	var rows []hbar
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
			return err
		}
		out["handoff"] = p
	}
	return nil
}

// plotQueue draws the server's work per release against the queue's length.
func (r *Results) plotQueue(dir string, out map[string]string) error {
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
			return err
		}
		out["queue"] = p
	}
	return nil
}
