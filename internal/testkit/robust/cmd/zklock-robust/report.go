//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/testkit/robust"
)

// context is how much history around a violation its report shows.
const aroundSpan = 3 * time.Second

// writeReport writes the report directory: result.json (the checker's
// verdict), report.md (counts, violations with the history around them,
// the fault timeline) and timeline.svg (faults beside each path's holders).
func writeReport(dir string, h robust.History, r robust.Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), b, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "timeline.svg"), []byte(timeline(h)), 0o644); err != nil {
		return err
	}
	var m strings.Builder
	fmt.Fprintf(&m, "# Robustness run, seed %d\n\nReplay: `scripts/robustness.sh --seed %d`. T = %s; %s of workload.\n\n",
		h.Seed, h.Seed, h.Session, time.Duration(h.End-h.Begin).Round(time.Second))
	m.WriteString("## Counts\n\n```\n" + summary(h, r) + "```\n\n![faults beside each path's holders](timeline.svg)\n\n")
	fmt.Fprintf(&m, "## Violations (%d)\n\n", len(r.Violations))
	for _, v := range r.Violations {
		fmt.Fprintf(&m, "### %s at %s: %s\n\n%s\n\n```\n%s```\n\n", v.Rule, at(h, v.At), v.Path, v.Detail, around(h, v))
	}
	m.WriteString("## Faults\n\n| start | heal | kind | target |\n|---|---|---|---|\n")
	fs := slices.Clone(h.Faults)
	sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
	for _, f := range fs {
		fmt.Fprintf(&m, "| %s | %s | %s | %s |\n", at(h, f.Start), at(h, f.End), f.Kind, f.Target)
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(m.String()), 0o644)
}

// summary is the counts, as the run prints them at the end.
func summary(h robust.History, r robust.Result) string {
	var b strings.Builder
	kinds := make([]string, 0, len(r.Faults))
	total := 0
	for k, n := range r.Faults {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		total += n
	}
	slices.Sort(kinds)
	exits := make([]int, 0, len(r.Exits))
	for e := range r.Exits {
		exits = append(exits, e)
	}
	slices.Sort(exits)
	var es []string
	for _, e := range exits {
		es = append(es, fmt.Sprintf("%d×%d", r.Exits[e], e))
	}
	gap := "none"
	if len(r.LossGaps) > 0 {
		gap = r.LossGaps[0].Round(time.Millisecond).String()
	}
	fmt.Fprintf(&b, "faults:          %d (%s)\n", total, strings.Join(kinds, ", "))
	fmt.Fprintf(&b, "runs:            %d, %d ran their command; exits %s\n", r.Runs, r.Ran, strings.Join(es, " "))
	fmt.Fprintf(&b, "losses (76):     %d: %d needed, %d revoked, %d needless\n", r.Losses, r.Needed, r.Revoked, len(r.Needless))
	fmt.Fprintf(&b, "smallest gap:    %s between a lost holder's last sign of life and its successor's first\n", gap)
	fmt.Fprintf(&b, "progress:        %d quiet windows judged\n", r.Windows)
	fmt.Fprintf(&b, "violations:      %d\n", len(r.Violations))
	return b.String()
}

// at is a monotonic time as seconds into the run.
func at(h robust.History, t int64) string {
	return fmt.Sprintf("%.3fs", float64(t-h.Begin)/1e9)
}

// around is the history near a violation: the runs on its path alive
// within aroundSpan of it, and the faults active then.
func around(h robust.History, v robust.Violation) string {
	var b strings.Builder
	lo, hi := v.At-int64(aroundSpan), v.At+int64(aroundSpan)
	for _, f := range h.Faults {
		if f.Start <= hi && f.End >= lo {
			fmt.Fprintf(&b, "fault %-12s %s … %s  %s\n", f.Kind, at(h, f.Start), at(h, f.End), f.Target)
		}
	}
	for _, run := range h.Runs {
		// A pool member's violation names the member's path: the runs of
		// the pool around it are its history.
		onPath := v.Path != "" && (slices.Contains(run.Paths, v.Path) || run.Take > 0 && slices.Contains(run.Paths, path.Dir(v.Path)))
		if !slices.Contains(v.Runs, run.ID) && !onPath {
			continue
		}
		if run.Exited < lo || run.Invoked > hi {
			continue
		}
		life := "never ran"
		if run.Life != nil {
			life = at(h, run.Life.First) + " … " + at(h, run.Life.Last)
		}
		tokens := fmt.Sprint(run.Tokens)
		if run.Take > 0 {
			tokens += fmt.Sprintf(", took %d: %q", run.Take, strings.Join(run.Resources, ","))
		}
		fmt.Fprintf(&b, "run %-14s %-7s zklock %s … %s pid %d, command %s, tokens %s, session %s, exit %d %s\n    %s\n",
			run.ID, run.Role, at(h, run.Invoked), at(h, run.Exited), run.PID, life, tokens, run.Session, run.Exit, run.Signal, run.Stderr)
	}
	return b.String()
}

// timeline draws the faults, one row per kind, above each path's holders,
// one lane per holder alive at once: green ran and exited 0, orange lost
// (76), grey any other exit, red a holder the kernel detector caught.
func timeline(h robust.History) string {
	const width, left, laneH = 1400.0, 150.0, 10.0
	span := float64(max(h.End-h.Begin, 1))
	x := func(t int64) float64 { return left + (width-left-10)*float64(t-h.Begin)/span }
	var rows strings.Builder
	y := 20.0
	label := func(s string) {
		fmt.Fprintf(&rows, `<text x="4" y="%.0f" font-size="11">%s</text>`+"\n", y+laneH-1, html.EscapeString(s))
	}
	kinds := map[string][]robust.Fault{}
	var names []string
	for _, f := range h.Faults {
		if kinds[f.Kind] == nil {
			names = append(names, f.Kind)
		}
		kinds[f.Kind] = append(kinds[f.Kind], f)
	}
	slices.Sort(names)
	for _, k := range names {
		label(k)
		for _, f := range kinds[k] {
			fmt.Fprintf(&rows, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="#7a5cc4"><title>%s %s</title></rect>`+"\n",
				x(f.Start), y, max(x(f.End)-x(f.Start), 1), laneH-2, html.EscapeString(f.Kind), html.EscapeString(f.Target))
		}
		y += laneH
	}
	for _, p := range h.Paths {
		y += laneH
		label(p.Name)
		var lanes []int64 // each lane's last end
		base := y
		for _, run := range h.Runs {
			if run.Life == nil || !slices.Contains(run.Paths, p.Name) {
				continue
			}
			lane := 0
			for lane < len(lanes) && lanes[lane] >= run.Life.First {
				lane++
			}
			if lane == len(lanes) {
				lanes = append(lanes, 0)
			}
			lanes[lane] = run.Life.Last
			colour := "#9a9a9a"
			switch {
			case run.Conflict:
				colour = "#d62728"
			case run.Exit == 0:
				colour = "#2ca02c"
			case run.Exit == 76:
				colour = "#ff7f0e"
			}
			fmt.Fprintf(&rows, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s"><title>%s exit %d</title></rect>`+"\n",
				x(run.Life.First), base+float64(lane)*laneH, max(x(run.Life.Last)-x(run.Life.First), 1), laneH-2, colour, html.EscapeString(run.ID), run.Exit)
		}
		y = base + float64(max(len(lanes), 1))*laneH
	}
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif">`+"\n%s</svg>\n",
		width, y+10, rows.String())
}
