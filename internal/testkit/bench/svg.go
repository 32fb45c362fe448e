package bench

import (
	"fmt"
	"math"
	"os"
	"strings"
)

// The plots are written by hand as SVG: a few rectangles, lines and labels
// need no plotting library, and the output is small, diffable text.

var toolColors = map[string]string{
	"zklock":     "#1f6fb4",
	"zklock-cgo": "#7fb2dc",
	"minimal":    "#17a2a2",
	"etcd":       "#e8710a",
	"flock":      "#2e9e44",
	"kazoo":      "#8e5bbf",
	"curator":    "#c9302c",
}

func toolColor(key string) string {
	if c, ok := toolColors[key]; ok {
		return c
	}
	return "#777777"
}

type svg struct{ b strings.Builder }

func newSVG(w, h int, title string) *svg {
	s := &svg{}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&s.b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", w, h)
	s.text(float64(w)/2, 22, "middle", "font-size=\"15\" font-weight=\"bold\"", title)
	return s
}

func esc(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}

func (s *svg) text(x, y float64, anchor, attrs, t string) {
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`+"\n", x, y, anchor, attrs, esc(t))
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64, extra string) {
	fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f" %s/>`+"\n", x1, y1, x2, y2, stroke, width, extra)
}

func (s *svg) rect(x, y, w, h float64, fill string) {
	fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x, y, w, h, fill)
}

func (s *svg) circle(x, y, r float64, fill string) {
	fmt.Fprintf(&s.b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>`+"\n", x, y, r, fill)
}

func (s *svg) write(path string) error {
	s.b.WriteString("</svg>\n")
	return os.WriteFile(path, []byte(s.b.String()), 0o644)
}

// logAxis maps values onto [p0, p1] pixels on a log10 scale spanning whole
// decades around [lo, hi].
type logAxis struct {
	d0, d1 float64 // decades
	p0, p1 float64
}

func newLogAxis(lo, hi, p0, p1 float64) logAxis {
	if lo <= 0 || math.IsNaN(lo) {
		lo = hi / 10
	}
	if hi <= lo {
		hi = lo * 10
	}
	return logAxis{d0: math.Floor(math.Log10(lo)), d1: math.Ceil(math.Log10(hi)), p0: p0, p1: p1}
}

func (a logAxis) pos(v float64) float64 {
	if v <= 0 {
		return a.p0
	}
	f := (math.Log10(v) - a.d0) / (a.d1 - a.d0)
	return a.p0 + f*(a.p1-a.p0)
}

// ticks returns 1, 2 and 5 times each decade in range, and whether each is
// a decade (drawn stronger and labelled).
func (a logAxis) ticks() (vals []float64, major []bool) {
	for d := a.d0; d <= a.d1; d++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, d)
			if math.Log10(v) > a.d1+1e-9 {
				break
			}
			vals = append(vals, v)
			major = append(major, m == 1)
		}
	}
	return vals, major
}

func fmtNum(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// hbar is one row of a horizontal bar chart: a bar to Value with a whisker
// to Whisker.
type hbar struct {
	Key, Label   string
	Value        float64
	Whisker      float64
	Annotation   string
	Unavailable  string
	HighlightRow bool
}

// hbarChart draws horizontal bars on a log scale: for latencies that span
// from a millisecond (flock) to a second (a JVM start).
func hbarChart(path, title, unit, whiskerName string, rows []hbar) error {
	const w, left, right, top, rowH = 860, 170, 250, 50, 34
	h := top + rowH*len(rows) + 60
	s := newSVG(w, h, title)
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		if r.Unavailable != "" || r.Value <= 0 {
			continue
		}
		lo = math.Min(lo, r.Value)
		hi = math.Max(hi, math.Max(r.Value, r.Whisker))
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	// Start a decade early when the smallest bar would be a sliver.
	ax := newLogAxis(lo/2, hi, left, w-right)
	yAxis := float64(top + rowH*len(rows))
	vals, major := ax.ticks()
	for i, v := range vals {
		x := ax.pos(v)
		col, wd := "#e4e4e4", 1.0
		if major[i] {
			col = "#c8c8c8"
		}
		s.line(x, top-6, x, yAxis, col, wd, "")
		if major[i] || len(vals) <= 8 {
			s.text(x, yAxis+16, "middle", `fill="#444"`, fmtNum(v))
		}
	}
	s.text((left+float64(w-right))/2, yAxis+38, "middle", `fill="#444"`, unit+" (log scale)")
	for i, r := range rows {
		y := float64(top + rowH*i)
		attrs := `fill="#222"`
		if r.HighlightRow {
			attrs = `fill="#000" font-weight="bold"`
		}
		s.text(left-10, y+rowH/2+4, "end", attrs, r.Label)
		if r.Unavailable != "" {
			s.text(left+6, y+rowH/2+4, "start", `fill="#888" font-style="italic"`, r.Unavailable)
			continue
		}
		x1 := ax.pos(r.Value)
		s.rect(left, y+7, math.Max(1, x1-left), rowH-14, toolColor(r.Key))
		xe := x1
		if r.Whisker > r.Value {
			xe = ax.pos(r.Whisker)
			s.line(x1, y+rowH/2, xe, y+rowH/2, "#333", 1.5, "")
			s.line(xe, y+11, xe, y+rowH-11, "#333", 1.5, "")
		}
		s.text(xe+8, y+rowH/2+4, "start", `fill="#222"`, r.Annotation)
	}
	s.line(left, top-6, left, yAxis, "#444", 1, "")
	s.line(left, yAxis, float64(w-right), yAxis, "#444", 1, "")
	s.text(float64(w-right)+8, float64(h-12), "start", `fill="#666" font-size="11"`, "bar: median, whisker: "+whiskerName)
	return s.write(path)
}

// gbarSeries is one tool in a grouped bar chart.
type gbarSeries struct {
	Key, Label string
	Values     []float64 // per group; NaN: not measured
}

// groupedBarChart draws vertical bars per group (loop count) and series
// (tool) on a log scale.
func groupedBarChart(path, title, yUnit string, groups []string, series []gbarSeries) error {
	const w, h, left, right, top, bottom = 860, 440, 80, 170, 50, 70
	s := newSVG(w, h, title)
	lo, hi := math.Inf(1), 0.0
	for _, se := range series {
		for _, v := range se.Values {
			if !math.IsNaN(v) && v > 0 {
				lo = math.Min(lo, v)
				hi = math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	ax := newLogAxis(lo, hi*1.3, h-bottom, top) // y grows upwards
	vals, major := ax.ticks()
	for i, v := range vals {
		y := ax.pos(v)
		col := "#ececec"
		if major[i] {
			col = "#c8c8c8"
		}
		s.line(left, y, w-right, y, col, 1, "")
		if major[i] || len(vals) <= 8 {
			s.text(left-8, y+4, "end", `fill="#444"`, fmtNum(v))
		}
	}
	fmt.Fprintf(&s.b, `<text x="18" y="%.1f" text-anchor="middle" fill="#444" transform="rotate(-90 18 %.1f)">%s</text>`+"\n",
		float64(top+h-bottom)/2, float64(top+h-bottom)/2, esc(yUnit+" (log scale)"))
	gw := float64(w-left-right) / float64(len(groups))
	bw := math.Min(40, (gw-24)/float64(max(1, len(series))))
	for gi, g := range groups {
		gx := float64(left) + gw*float64(gi)
		s.text(gx+gw/2, float64(h-bottom)+20, "middle", `fill="#222"`, g)
		x0 := gx + (gw-bw*float64(len(series)))/2
		for si, se := range series {
			v := se.Values[gi]
			x := x0 + bw*float64(si)
			if math.IsNaN(v) || v <= 0 {
				s.text(x+bw/2, float64(h-bottom)-4, "middle", `fill="#999" font-size="10"`, "–")
				continue
			}
			y := ax.pos(v)
			s.rect(x+1, y, bw-2, float64(h-bottom)-y, toolColor(se.Key))
			s.text(x+bw/2, y-4, "middle", `fill="#222" font-size="10"`, fmtNum(v))
		}
	}
	s.text(float64(left+w-right)/2, float64(h-bottom)+44, "middle", `fill="#444"`, "concurrent loops on one lock")
	s.line(left, top, left, h-bottom, "#444", 1, "")
	s.line(left, h-bottom, w-right, h-bottom, "#444", 1, "")
	for si, se := range series {
		y := float64(top + 10 + 22*si)
		s.rect(float64(w-right)+16, y-10, 14, 14, toolColor(se.Key))
		s.text(float64(w-right)+36, y+1, "start", `fill="#222"`, se.Label)
	}
	return s.write(path)
}

// lineSeries is one line of a line chart.
type lineSeries struct {
	Label, Color string
	// Dash is an SVG stroke-dasharray ("" for a solid line), so that a
	// line lying on top of another stays visible.
	Dash   string
	Values []float64
}

// lineChart draws lines over categorical x values on a linear y scale from 0.
func lineChart(path, title, xUnit, yUnit string, xs []string, series []lineSeries) error {
	const w, h, left, right, top, bottom = 860, 400, 70, 300, 50, 70
	s := newSVG(w, h, title)
	hi := 0.0
	for _, se := range series {
		for _, v := range se.Values {
			if !math.IsNaN(v) {
				hi = math.Max(hi, v)
			}
		}
	}
	step := niceStep(hi / 5)
	top5 := step * math.Ceil(hi/step)
	if top5 == 0 {
		top5 = 1
	}
	ypos := func(v float64) float64 { return float64(h-bottom) - v/top5*float64(h-bottom-top) }
	for v := 0.0; v <= top5+1e-9; v += step {
		y := ypos(v)
		s.line(left, y, w-right, y, "#e4e4e4", 1, "")
		s.text(left-8, y+4, "end", `fill="#444"`, fmtNum(v))
	}
	fmt.Fprintf(&s.b, `<text x="18" y="%.1f" text-anchor="middle" fill="#444" transform="rotate(-90 18 %.1f)">%s</text>`+"\n",
		float64(top+h-bottom)/2, float64(top+h-bottom)/2, esc(yUnit))
	xpos := func(i int) float64 {
		if len(xs) == 1 {
			return float64(left+w-right) / 2
		}
		return float64(left+30) + float64(i)*float64(w-right-left-60)/float64(len(xs)-1)
	}
	for i, x := range xs {
		s.text(xpos(i), float64(h-bottom)+20, "middle", `fill="#222"`, x)
	}
	s.text(float64(left+w-right)/2, float64(h-bottom)+44, "middle", `fill="#444"`, xUnit)
	for _, se := range series {
		var pts []string
		for i, v := range se.Values {
			if !math.IsNaN(v) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xpos(i), ypos(v)))
			}
		}
		dash := ""
		if se.Dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, se.Dash)
		}
		fmt.Fprintf(&s.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), se.Color, dash)
		for i, v := range se.Values {
			if !math.IsNaN(v) {
				s.circle(xpos(i), ypos(v), 3.5, se.Color)
			}
		}
	}
	s.line(left, top, left, h-bottom, "#444", 1, "")
	s.line(left, h-bottom, w-right, h-bottom, "#444", 1, "")
	for i, se := range series {
		y := float64(top + 10 + 22*i)
		dash := ""
		if se.Dash != "" {
			dash = fmt.Sprintf(`stroke-dasharray="%s"`, se.Dash)
		}
		s.line(float64(w-right)+16, y-3, float64(w-right)+36, y-3, se.Color, 3, dash)
		s.text(float64(w-right)+42, y+1, "start", `fill="#222"`, se.Label)
	}
	return s.write(path)
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}
